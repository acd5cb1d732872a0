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
  /** Whether this session's history import has the chunk of that notification queued or under way. */
  importingHistory(messageId: string): boolean;
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
      onlyIfLeft: !atLogin,
      // Each replayed message's records are deleted only after its handling.
      handleUpsert: (upsert) => inbound.handleUpsert(accountId, upsert, { ...ctx, writeAhead: () => 'replay' }),
      // A history chunk is imported again beside the inbound queue (history-import.ts), which
      // does not wait for it; its records go once it is stored. One still waiting its turn in
      // this session's import (a long import outlasts the inbox's two minutes) is left to it.
      takeOver: (message, records) => {
        if (message.key.id && parts.importingHistory(message.key.id)) return true;
        const imported = parts.importHistory(message);
        if (!imported) return false;
        imported
          .then(() => parts.inbox.remove(records))
          .catch((error: unknown) => {
            // Its record stays: the next periodic replay must read the table again to find it.
            parts.inbox.keep();
            parts.log.error(
              { err: error, messageId: message.key.id },
              'replayed history chunk not imported (or its record not deleted): kept for the next replay',
            );
          });
        return true;
      },
    });
    await inbound.replayOutbox(accountId, { atLogin });
  });
}
