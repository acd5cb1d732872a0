import { createQueues } from '../../core/queues.js';
import type { Command } from '../../core/schemas/command.js';
import { claimOutbound, markOutboundFailed, markOutboundSent } from '../../core/store/outbound.js';
import { tableOf } from '../../core/store/table.js';
import type { TestStack } from './test-stack.js';
import { silentLogger } from './test-stack.js';
import { waitFor } from './wait.js';

/**
 * `sent`: claim the send as the real connector does, then record it sent; `beforeClaim` and
 * `afterClaim` let a test put the claim or the outcome after an event (e.g. the API's deadline).
 * A refused claim means the send does not happen. `failed`: claimed, then refused by "the network".
 */
export type Outcome =
  | { outcome: 'sent'; beforeClaim?: () => Promise<void>; afterClaim?: () => Promise<void> }
  | { outcome: 'failed'; reason: string }
  | { outcome: 'ignore' };

interface FakeSend {
  accountId: string;
  messageId: string;
}

export interface FakeConnector {
  /** Every command received so far, in order. */
  commands: Command[];
  /** Every send that "went out" (claimed and recorded sent), in order: what a phone would get. */
  sent: FakeSend[];
  /** Sends whose claim was refused (the API had given up on them): never sent. */
  refused: FakeSend[];
  /** Resolves with the first received command matching `predicate` (polls with a deadline). */
  waitFor(predicate: (command: Command) => boolean, timeoutMs?: number): Promise<Command>;
  stop(): Promise<void>;
}

const SEND_TYPES = new Set([
  'send_text',
  'send_reply',
  'send_media',
  'send_reaction',
  'delete_message',
  'send_location',
  'send_contact',
  'send_poll',
  'send_sticker',
  'edit_message',
  'forward_message',
  'mark_chat_read',
  'send_presence',
  'request_history',
  'fetch_media',
]);

/**
 * Plays the connector's part in API tests: consumes the command queue and finishes each send's
 * outbound record as `decide` says (default: sent). Non-send commands are only recorded.
 */
export function startFakeConnector(stack: TestStack, decide: (command: Command) => Outcome = () => ({ outcome: 'sent' })): FakeConnector {
  const queues = createQueues(stack.config, stack.clients, silentLogger);
  const table = tableOf(stack.config, stack.clients);
  const commands: Command[] = [];
  const sent: FakeSend[] = [];
  const refused: FakeSend[] = [];
  const abort = new AbortController();

  const loop = (async () => {
    while (!abort.signal.aborted) {
      const received = await queues.receiveCommands({ waitSeconds: 1, abortSignal: abort.signal }).catch((error: unknown) => {
        if (abort.signal.aborted) return [];
        throw error;
      });
      for (const message of received) {
        const command = message.body;
        commands.push(command);
        if (SEND_TYPES.has(command.type) && 'messageId' in command.payload) {
          const decision = decide(command);
          const send = { accountId: command.accountId, messageId: command.payload.messageId };
          if (decision.outcome !== 'ignore') {
            if (decision.outcome === 'sent') await decision.beforeClaim?.();
            if (!(await claimOutbound(table, send.accountId, send.messageId))) {
              refused.push(send);
            } else if (decision.outcome === 'sent') {
              await decision.afterClaim?.();
              sent.push(send);
              await markOutboundSent(table, send.accountId, send.messageId);
            } else {
              await markOutboundFailed(table, send.accountId, send.messageId, decision.reason);
            }
          }
        }
        await queues.ackCommand(message.receiptHandle);
      }
    }
  })();

  return {
    commands,
    sent,
    refused,
    waitFor(predicate, timeoutMs = 20_000) {
      return waitFor('the fake connector to receive the expected command', () => commands.find(predicate), { timeoutMs });
    },
    async stop() {
      abort.abort();
      await loop.catch(() => undefined);
    },
  };
}
