import type { Contact, WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from '../../core/logger.js';
import type { Inbox } from '../inbound/inbox.js';
import { replayInbox } from '../inbound/inbox-replay.js';
import type { Dispatcher, InboundHandlers } from './event-dispatcher.js';

/** How often a connected session replays write-ahead records left behind (besides at each login). */
export const INBOX_REPLAY_EVERY_MS = 5 * 60_000;

/** The session's parts a replay uses. */
export interface ReplayParts {
  accountId: string;
  inbox: Inbox;
  log: Logger;
  inbound: InboundHandlers;
  /** The import of a history chunk a replayed notification announces; undefined for other messages. */
  importHistory(message: WAMessage): Promise<void> | undefined;
}

/**
 * Queues a replay of the write-ahead records no handling is waiting for (a previous process
 * died after receipting them, or storing them failed) behind the socket's inbound events, then
 * of the event outbox's items left behind (read at a login, `atLogin`, and otherwise only when
 * this process left one). Nothing without the socket's `dispatcher` or the account's own
 * identity (`me`).
 */
export function queueInboxReplay(
  dispatcher: Dispatcher | undefined,
  me: Contact | undefined,
  parts: ReplayParts,
  { atLogin }: { atLogin: boolean },
): void {
  if (!dispatcher || !me) return;
  const { accountId, inbound } = parts;
  dispatcher.run('write-ahead replay', async (ctx) => {
    await replayInbox({
      accountId,
      inbox: parts.inbox,
      me: { id: me.id, lid: me.lid },
      logger: parts.log,
      // Each replayed message's records are deleted only after its handling: a history chunk's
      // once it is imported again (history-import.ts), which the inbound queue waits for.
      handleUpsert: (upsert) => {
        const [message] = upsert.messages;
        const imported = message && upsert.messages.length === 1 ? parts.importHistory(message) : undefined;
        return imported ?? inbound.handleUpsert(accountId, upsert, { ...ctx, writeAhead: () => 'replay' });
      },
    });
    await inbound.replayOutbox(accountId, { atLogin });
  });
}
