import type { WAMessage } from '@whiskeysockets/baileys';
import { lazyChild } from '../../core/lazy-child.js';
import type { Logger } from '../../core/logger.js';
import type { InboundAction } from './map-message.js';
import type { NewInRun } from './new-messages.js';
import type { InboundContext, UpsertedMessage } from './pipeline.js';

/**
 * The order of one account's messages: each is handled after the messages before it, and new
 * messages that follow each other are written together as a run (new-messages.ts). A failure is
 * logged here, once per message.
 */

export interface OrderingDeps {
  logger: Logger;
  /** What the message is. */
  map(msg: WAMessage, ctx: InboundContext): Promise<InboundAction>;
  /** Stores a run of new messages from others without media; `failed` is called for each that failed. */
  storeNewRun(
    accountId: string,
    run: readonly NewInRun[],
    ctx: InboundContext,
    failed: (entry: NewInRun, error: unknown) => void,
  ): Promise<void>;
  /** Handles a message that is not part of a run. */
  handleOne(
    accountId: string,
    msg: WAMessage,
    upsertType: UpsertedMessage['type'],
    ctx: InboundContext,
    action: InboundAction,
  ): Promise<void>;
}

/** `handleInOrder(accountId, messages, ctx)`: handles messages in order; the answer says which failed (by index). */
export function inOrderHandler({ logger, map, storeNewRun, handleOne }: OrderingDeps) {
  return async function handleInOrder(
    accountId: string,
    messages: readonly UpsertedMessage[],
    ctx: InboundContext,
  ): Promise<Map<number, unknown>> {
    const failures = new Map<number, unknown>();
    const fail = (index: number, messageId: string | null | undefined, error: unknown) => {
      failures.set(index, error);
      logger.error({ accountId, messageId, err: error }, 'inbound message failed');
    };
    let run: NewInRun[] = [];
    const storeRun = async () => {
      if (run.length === 0) return;
      const taken = run;
      run = [];
      await storeNewRun(accountId, taken, ctx, (entry, error) => fail(entry.index, entry.message.messageId, error));
    };
    for (const [index, { message: msg, type }] of messages.entries()) {
      try {
        const action = await map(msg, ctx);
        if (action.kind === 'message' && !action.media && !action.pollSecret && !action.message.fromMe) {
          const log = lazyChild(logger, () => ({ accountId, messageId: msg.key.id }));
          run.push({ index, msg, message: action.message, type, log });
          continue;
        }
        // Anything else is handled on its own, after the messages before it are stored.
        await storeRun();
        await handleOne(accountId, msg, type, ctx, action);
      } catch (error) {
        fail(index, msg.key.id, error);
      }
    }
    await storeRun();
    return failures;
  };
}
