import type { Logger } from '../../core/logger.js';
import { queuedSendEventFor } from '../../core/message-status.js';
import type { EventPublisher } from '../inbound/event-publisher.js';
import type { QueuedSend } from '../../core/schemas/command.js';
import { chatWriterOf } from '../../core/store/chat-writer.js';
import { failPendingOutbound } from '../../core/store/outbound.js';
import { loadSendQueue, removeQueuedSend } from '../../core/store/send-queue.js';
import type { Table } from '../../core/store/table.js';
import type { AccountSession } from '../session/account-session.js';
import { AccountPacer, type AccountPacerDeps, type PacedSession } from './account-pacer.js';

export interface PacerDeps {
  table: Table;
  logger: Logger;
  /** Where the queued sends' `message.status` events go (straight out, connector/webhooks/straight-delivery.ts). */
  events: EventPublisher;
  session: AccountPacerDeps['session'];
  send: AccountPacerDeps['send'];
  pausedUntil: AccountPacerDeps['pausedUntil'];
  random?: () => number;
}

/** The reason queued sends fail with when their account logs out. */
const LOGGED_OUT = 'not sent: the account logged out';

/**
 * The paced sends of the accounts this connector runs (docs/sending.md#paced-sends): one
 * AccountPacer per account that has a session here, made when the session starts (which replays
 * its queue) and dropped when it leaves (the queue stays in DynamoDB for the next owner).
 */
export class Pacer {
  private readonly accounts = new Map<string, AccountPacer>();
  private readonly accountDeps: AccountPacerDeps;

  constructor(private readonly deps: PacerDeps) {
    this.accountDeps = {
      table: deps.table,
      logger: deps.logger,
      session: deps.session,
      send: deps.send,
      pausedUntil: deps.pausedUntil,
      // A chat item exists once a message went either way (core/store/chat-writer.ts).
      isNewChat: async (accountId, jid) => (await chatWriterOf(deps.table).find(accountId, jid)) === undefined,
      failedBeforeSend: (accountId, send, error) => this.emit(accountId, send, { status: 'failed', error }),
      ...(deps.random ? { random: deps.random } : {}),
    };
  }

  /** A session started here: its queue is replayed. */
  started(accountId: string): void {
    void this.accounts.get(accountId)?.stop();
    this.accounts.set(accountId, new AccountPacer(accountId, this.accountDeps));
  }

  /** The session leaves: resolves once a send under way has finished (AccountPacer.stop). */
  stopped(accountId: string): Promise<void> {
    const pacer = this.accounts.get(accountId);
    this.accounts.delete(accountId);
    return pacer?.stop() ?? Promise.resolve();
  }

  /**
   * A `send_queued` command: the send joins its account's queue here, with its `queued` event.
   * False when the account has no session here (the send waits in DynamoDB for the session's
   * start, which replays it).
   */
  queued(send: QueuedSend): boolean {
    const pacer = this.accounts.get(send.send.accountId);
    if (send.async) this.emit(send.send.accountId, send, { status: 'queued' });
    if (!pacer) return false;
    pacer.add(send);
    return true;
  }

  /** Queued sends held in memory for the account (tests, the benchmark). */
  size(accountId: string): number {
    return this.accounts.get(accountId)?.size ?? 0;
  }

  /** The account logged out: its queued sends fail (docs/sending.md#paced-sends). */
  loggedOut(accountId: string): void {
    void this.failAll(accountId).catch((error: unknown) =>
      this.deps.logger.error({ err: error, accountId }, 'failing the queued sends of a logged-out account failed'),
    );
  }

  private async failAll(accountId: string): Promise<void> {
    const { sends } = await loadSendQueue(this.deps.table, accountId);
    for (const send of sends) {
      if (await failPendingOutbound(this.deps.table, accountId, send.messageId, LOGGED_OUT)) {
        if (send.async) this.emit(accountId, send, { status: 'failed', error: LOGGED_OUT });
      }
      await removeQueuedSend(this.deps.table, accountId, send.ticket);
    }
    if (sends.length > 0) this.deps.logger.info({ accountId, failed: sends.length }, 'queued sends failed: the account logged out');
  }

  private emit(accountId: string, send: QueuedSend, move: Parameters<typeof queuedSendEventFor>[2]): void {
    const event = queuedSendEventFor(accountId, { messageId: send.messageId, chatId: send.send.payload.to }, move);
    this.deps.events
      .publish(event)
      .catch((error: unknown) => this.deps.logger.error({ err: error, accountId, messageId: send.messageId }, 'queueing the event failed'));
  }
}

/** What the pacer sees of a session: read at each look, so a status or settings change counts at once. */
export function pacedSessionOf(session: AccountSession | undefined): PacedSession | undefined {
  if (!session) return undefined;
  return {
    status: session.status,
    currentSettings: session.currentSettings,
    linkedAt: session.linkedAt,
    async typing(jid) {
      await session.socket?.sendPresenceUpdate('composing', jid);
    },
  };
}
