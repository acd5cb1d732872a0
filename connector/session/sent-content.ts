import { proto, type WAMessage, type WAMessageKey } from '@whiskeysockets/baileys';
import type { Logger } from '../../core/logger.js';
import { findSentContent } from '../../core/store/outbound.js';
import type { Table } from '../../core/store/table.js';

/**
 * What a sent message is, for answering a recipient's retry receipt. A recipient that cannot
 * decrypt a message (its session with us is gone or behind: a new device, a crash on either
 * side) asks for it again, and Baileys encrypts it anew, for a fresh session if need be. Baileys
 * finds the message in its own recent-message cache, which lives and dies with one socket: a
 * retry that reaches the account after a reconnect, a restart or a hand-over to another
 * connector finds nothing there and asks `getMessage`, and without an answer the message is never
 * delivered although its send answered 200. So a send keeps the message on its outbound record
 * (one day, core/store/outbound.ts), and `getMessage` reads it from there.
 */

/** Larger messages (long texts with big link previews) are not kept: the record stays small. */
const MAX_SENT_CONTENT_BYTES = 64 * 1024;

/** The sent message encoded for its outbound record, unless it has no content or is too large. */
export function sentContentOf(sent: WAMessage): Uint8Array | undefined {
  if (!sent.message) return undefined;
  const encoded = proto.Message.encode(sent.message).finish();
  return encoded.byteLength <= MAX_SENT_CONTENT_BYTES ? encoded : undefined;
}

/** Baileys' `getMessage`: the content of a message this account sent, while its record lives. */
export function sentMessageLookup(
  table: Table,
  accountId: string,
  log: Logger,
): (key: WAMessageKey) => Promise<proto.IMessage | undefined> {
  return async (key) => {
    // Only this account's sends have an outbound record; any other id finds nothing.
    if (!key.id) return undefined;
    try {
      const content = await findSentContent(table, accountId, key.id);
      log.debug({ messageId: key.id, found: Boolean(content) }, 'message asked for again by its recipient');
      return content ? proto.Message.decode(content) : undefined;
    } catch (error) {
      log.warn({ err: error, messageId: key.id }, 'reading a sent message for a retry failed');
      return undefined;
    }
  };
}
