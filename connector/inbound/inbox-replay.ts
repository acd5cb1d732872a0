import { cleanMessage, decodeMessageNode, proto, unpadRandomMax16, type BaileysEventMap, type WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from '../../core/logger.js';
import type { InboxRecord } from '../../core/schemas/inbox.js';
import type { Inbox } from './inbox.js';

/** The account's own identity, as Baileys' creds hold it (`creds.me`). */
export interface SelfIdentity {
  id: string;
  lid?: string | undefined;
}

/**
 * The message Baileys would have emitted for these records (the decrypted parts of one stanza),
 * built the way it builds it: the key, timestamp and pushName from the stanza attributes
 * (decodeMessageNode), each part unpadded and decoded, a message sent from another of our
 * devices unwrapped, the parts merged, then normalized (cleanMessage). Throws on records that
 * cannot be decoded.
 */
export function messageFromInbox(records: InboxRecord[], me: SelfIdentity): WAMessage {
  const parts = [...records].sort((a, b) => a.part - b.part);
  const [first] = parts;
  if (!first) throw new Error('no write-ahead records to rebuild a message from');
  const { fullMessage } = decodeMessageNode({ tag: 'message', attrs: first.stanza }, me.id, me.lid ?? '');
  for (const record of parts) {
    const decoded = proto.Message.decode(unpadRandomMax16(record.plaintext));
    const message = decoded.deviceSentMessage?.message ?? decoded;
    if (fullMessage.message) Object.assign(fullMessage.message, message);
    else fullMessage.message = message;
  }
  cleanMessage(fullMessage, me.id, me.lid ?? '');
  return fullMessage;
}

export interface InboxReplayDeps {
  accountId: string;
  inbox: Inbox;
  me: SelfIdentity;
  /** The inbound pipeline (idempotent: a message stored already only gets its pending event). */
  handleUpsert(upsert: BaileysEventMap['messages.upsert']): Promise<void>;
  /**
   * A message some other handling takes over, which deletes its records itself once done (a
   * history chunk, imported beside the inbound queue): true when taken, and the replay goes on.
   */
  takeOver?(message: WAMessage, records: InboxRecord[]): boolean;
  logger: Logger;
  /** A periodic replay: the table is read only when this process may have left a record (Inbox.stranded). */
  onlyIfLeft?: boolean;
}

/**
 * Feeds the account's stranded write-ahead records through the inbound pipeline, one message at
 * a time, oldest first, and deletes each message's records once the pipeline handled it. A
 * message the pipeline fails on keeps its records for the next replay; records that cannot be
 * decoded are dropped with a warning (they never will be).
 */
export async function replayInbox(deps: InboxReplayDeps): Promise<{ replayed: number; failed: number }> {
  const byMessage = new Map<string, InboxRecord[]>();
  for (const record of await deps.inbox.stranded({ onlyIfLeft: deps.onlyIfLeft === true })) {
    const records = byMessage.get(record.messageId);
    if (records) records.push(record);
    else byMessage.set(record.messageId, [record]);
  }
  const receivedAt = (records: InboxRecord[]) => Math.min(...records.map((r) => r.receivedAt));
  const messages = [...byMessage.values()].sort((a, b) => receivedAt(a) - receivedAt(b));
  let replayed = 0;
  let failed = 0;
  for (const records of messages) {
    const messageId = records[0]?.messageId;
    let message: WAMessage;
    try {
      message = messageFromInbox(records, deps.me);
    } catch (error) {
      deps.logger.warn({ accountId: deps.accountId, messageId, err: error }, 'unreadable write-ahead record dropped');
      await deps.inbox.remove(records);
      continue;
    }
    if (deps.takeOver?.(message, records)) {
      replayed += 1;
      continue;
    }
    try {
      await deps.handleUpsert({ messages: [message], type: records[0]?.stanza.offline ? 'append' : 'notify' });
      await deps.inbox.remove(records);
      replayed += 1;
    } catch (error) {
      failed += 1;
      deps.inbox.keep();
      deps.logger.error(
        { accountId: deps.accountId, messageId, err: error },
        'write-ahead replay of a message failed: kept for the next one',
      );
    }
  }
  if (messages.length > 0) deps.logger.info({ accountId: deps.accountId, replayed, failed }, 'inbound write-ahead records replayed');
  return { replayed, failed };
}
