import { BoundedCache } from '../bounded-cache.js';
import { createBatcher, type Batcher } from '../batcher.js';
import { chatKey, keyText, messageKey, type Key } from '../keys.js';
import { KeyedSerial } from '../serial.js';
import { chatSchema, type Chat } from '../schemas/chat.js';
import type { Message } from '../schemas/message.js';
import { BATCH_WRITE_LIMIT, batchGet } from './batch.js';
import { applyChatChange, chatItem, findChat, updateChat, type ChatChange } from './chats.js';
import { messageItem, putMessageIfAbsent, type MessageMarks } from './messages.js';
import { keptSince } from './retention.js';
import { perTable, withoutKeys, type Table } from './table.js';
import { tableWrites, writeInSharedRequests } from './table-writes.js';

/**
 * The connector's writes of new message rows and of chats, for every account of the process,
 * in shared requests:
 *
 *   const chats = chatWriterOf(table);
 *   const stored = await chats.putMessageIfAbsent(accountId, message, marks, { at, unread: 1, name });
 *   await chats.change(accountId, chatId, { unread: -3 });   // read receipts sent
 *
 * A row is stored "if absent": a BatchGetItem (strongly consistent, keys only) finds which rows
 * are there already, and a BatchWriteItem stores the others (the table's shared one, beside the
 * write-ahead records and signal keys of the moment: table-writes.ts), where a conditional
 * PutItem each cost a request per message. The chat a message moves travels with its row, as
 * the whole chat item: this writer keeps the chats it wrote or read (`chat-rows`), so it knows
 * what the item becomes without a conditional UpdateItem of its own (the one request per message
 * a burst still paid for, docs/benchmarks.md). Its unread count grows only for rows that were
 * absent: a redelivery leaves it as it was (its time still moves the chat forward, which a
 * replay after a crash needs).
 *
 * The reads and the writes are not one atomic step, so this relies on what makes this process
 * the only writer of an account's new rows and chats: the account's lease (one connector
 * handles its messages and commands), every chat change of the process going through here, and
 * the shared requests' order per key (a chat's puts land in the order they were made). A
 * session that starts calls `forgetAccount`, so the chats of an account that was elsewhere in
 * between are read again. A failed write forgets the chats it carried. A lone item (a quiet
 * moment) is one conditional PutItem for the row, then one UpdateItem for a chat not known yet;
 * or the known chat's put, in the shared requests, beside the row's (nothing when the chat does
 * not change). When the caller holds the chat (`HoldChat`: a live message's write-ahead record
 * does), that put waits for company instead, and the message's event does not wait for it.
 */
export interface ChatWriter {
  /**
   * Stores the row unless the message id is stored already (false: it was, and the row is left
   * as it was), and applies `chat` to the message's chat (its `unread` only when stored).
   */
  putMessageIfAbsent(accountId: string, message: Message, marks?: MessageMarks, chat?: ChatChange, holdChat?: HoldChat): Promise<boolean>;
  /** Applies a change to a chat (one without `at` changes only a chat that exists). */
  change(accountId: string, chatId: string, change: ChatChange): Promise<void>;
  /**
   * The chat as this writer has it: with the changes made, even those whose put is still waiting
   * for company (the table's copy may lag them by `CHAT_LINGER_MS`); read from the table when not
   * known.
   */
  find(accountId: string, chatId: string): Promise<Chat | undefined>;
  /** Forgets what is known of the account's chats: the next change reads them again. */
  forgetAccount(accountId: string): void;
}

/**
 * Takes the write of a row's chat instead of the caller awaiting it (`putMessageIfAbsent` then
 * resolves once the row is settled). Given by a caller that keeps what it needs to write the
 * chat again until the promise resolves (a write-ahead record, replayed after a crash): the
 * chat's put may then wait for company (`CHAT_LINGER_MS`) without holding up the message's event.
 */
export type HoldChat = (chatWritten: Promise<void>) => void;

type Item =
  | { kind: 'row'; accountId: string; message: Message; marks: MessageMarks | undefined; chat: ChatChange | undefined; holdChat?: HoldChat }
  | { kind: 'chat'; accountId: string; chatId: string; change: ChatChange };

type RowItem = Extract<Item, { kind: 'row' }>;

/** What is known of a chat: its item's fields, or that it does not exist. */
type Known = Chat | 'absent';

const REQUESTS_IN_FLIGHT = 4;
/**
 * How long a held chat's put waits for company: at a steady rate it leaves with the next
 * message's write-ahead record (or this one's deletion) instead of in a request of its own
 * (docs/benchmarks.md).
 */
const CHAT_LINGER_MS = 50;
/** Chats kept (the most recently written); beyond this the least recently used are read again. */
const KNOWN_CHATS_LIMIT = 50_000;
/** A chat not written for this long is read again (a safety net: nothing else writes chats). */
const KNOWN_CHAT_TTL_MS = 30 * 60_000;

const chatIdOf = (item: Item) => (item.kind === 'row' ? item.message.chatId : item.chatId);
const chatKeyText = (item: Item) => `${item.accountId}\n${chatIdOf(item)}`;
const sameChat = (a: Chat | undefined, b: Chat | undefined) =>
  a === b ||
  (a !== undefined && b !== undefined && a.name === b.name && a.unreadCount === b.unreadCount && a.lastMessageTime === b.lastMessageTime);

function createChatWriter(table: Table): ChatWriter {
  const known = new BoundedCache<string, Known>('chat-rows', KNOWN_CHATS_LIMIT, KNOWN_CHAT_TTL_MS);
  /** Bumped by `forgetAccount`: entries of an earlier generation are never read again. */
  const generations = new Map<string, number>();
  const knownKey = (accountId: string, chatId: string) => `${accountId}\n${generations.get(accountId) ?? 0}\n${chatId}`;
  const recall = (accountId: string, chatId: string): Known | undefined => known.get(knownKey(accountId, chatId));
  const remember = (accountId: string, chatId: string, chat: Chat | undefined) => known.set(knownKey(accountId, chatId), chat ?? 'absent');

  /**
   * One chat change on its own: nothing when the known chat does not change, else one write. A
   * known chat is remembered as changed before its put lands, so the chat's next change builds on
   * it (the shared requests keep the puts of one chat in order: table-writes.ts).
   */
  async function changeAlone(accountId: string, chatId: string, change: ChatChange, lingerMs = 0): Promise<void> {
    let before = recall(accountId, chatId);
    try {
      // A floor for the count is no counter update: the chat is read, then written whole.
      if (before === undefined && change.unreadAtLeast !== undefined) {
        const [stored] = await batchGet(table, [chatKey(accountId, chatId)]);
        const read = stored ? chatSchema.parse(withoutKeys(stored)) : undefined;
        remember(accountId, chatId, read);
        before = read ?? 'absent';
      }
      if (before === undefined) {
        remember(accountId, chatId, await updateChat(table, accountId, chatId, change));
        return;
      }
      const current = before === 'absent' ? undefined : before;
      const after = applyChatChange(current, chatId, change, keptSince(table.retention?.messageDays));
      if (!after || sameChat(current, after)) return;
      remember(accountId, chatId, after);
      await tableWrites(table).add({ put: chatItem(accountId, after, table.retention?.messageDays) }, lingerMs);
    } catch (error) {
      known.delete(knownKey(accountId, chatId));
      throw error;
    }
  }

  async function sendAlone(item: Item): Promise<boolean | undefined> {
    if (item.kind === 'chat') {
      await changeAlone(item.accountId, item.chatId, item.change);
      return undefined;
    }
    const { accountId, message, marks, chat } = item;
    if (!chat || recall(accountId, message.chatId) === undefined) {
      // A chat not known yet is one UpdateItem, which must know whether the row is new.
      const stored = await putMessageIfAbsent(table, accountId, message, marks);
      if (chat) await changeAlone(accountId, message.chatId, stored ? chat : { ...chat, unread: 0 });
      return stored;
    }
    if (item.holdChat) return putRowHoldingChat(item, chat, item.holdChat);
    // A known chat is written beside the row, as if the row were new (a quiet moment then costs
    // one round trip, not two); a row that was there already, or failed, takes the unread back.
    const [row, written] = await Promise.allSettled([
      putMessageIfAbsent(table, accountId, message, marks),
      changeAlone(accountId, message.chatId, chat),
    ]);
    if (written.status === 'rejected') throw written.reason;
    const unread = chat.unread ?? 0;
    if ((row.status === 'rejected' || !row.value) && unread !== 0) await changeAlone(accountId, message.chatId, { unread: -unread });
    if (row.status === 'rejected') throw row.reason;
    return row.value;
  }

  /**
   * A lone row whose known chat the caller holds: the row is stored at once, the chat's put waits
   * for company and is handed to `holdChat`, with the unread taken back when the row was there.
   */
  async function putRowHoldingChat(item: RowItem, chat: ChatChange, holdChat: HoldChat): Promise<boolean> {
    const { accountId, message, marks } = item;
    const written = changeAlone(accountId, message.chatId, chat, CHAT_LINGER_MS);
    // Handed to `holdChat` below, or awaited on a failure: a rejection meanwhile is not unhandled.
    written.catch(() => undefined);
    const unread = chat.unread ?? 0;
    let stored: boolean;
    try {
      stored = await putMessageIfAbsent(table, accountId, message, marks);
    } catch (error) {
      // The handling fails and its record stays for a replay: the chat is left as it would be.
      const takenBack = unread !== 0 ? changeAlone(accountId, message.chatId, { unread: -unread }) : undefined;
      await Promise.allSettled([written, takenBack]);
      throw error;
    }
    const takenBack = !stored && unread !== 0 ? changeAlone(accountId, message.chatId, { unread: -unread }, CHAT_LINGER_MS) : undefined;
    holdChat(Promise.all([written, takenBack]).then(() => undefined));
    return stored;
  }

  /** The chats of a batch as they are now: known ones from memory, the others read. */
  async function chatsOf(batch: Item[]): Promise<Map<string, Chat | undefined>> {
    const chats = new Map<string, Chat | undefined>();
    /** Chats not known yet, by their text, with their key. */
    const unknown = new Map<string, Key>();
    for (const item of batch) {
      const text = chatKeyText(item);
      if (chats.has(text) || unknown.has(text)) continue;
      const before = recall(item.accountId, chatIdOf(item));
      if (before === undefined) unknown.set(text, chatKey(item.accountId, chatIdOf(item)));
      else chats.set(text, before === 'absent' ? undefined : before);
    }
    if (unknown.size === 0) return chats;
    const found = new Map((await batchGet(table, [...unknown.values()])).map((stored) => [keyText(stored), stored]));
    for (const [text, key] of unknown) {
      const stored = found.get(keyText(key));
      chats.set(text, stored ? chatSchema.parse(withoutKeys(stored)) : undefined);
    }
    return chats;
  }

  async function sendTogether(batch: Item[]): Promise<Array<boolean | undefined>> {
    const rows = batch.filter((item) => item.kind === 'row');
    const [found, chats] = await Promise.all([
      rows.length > 0
        ? batchGet(
            table,
            rows.map((row) => messageKey(row.accountId, row.message.messageId)),
            'pk, sk',
          )
        : [],
      chatsOf(batch),
    ]);
    const present = new Set(found.map(keyText));
    const absent = new Set(rows.filter((row) => !present.has(keyText(messageKey(row.accountId, row.message.messageId)))));
    const before = new Map(chats);
    const since = keptSince(table.retention?.messageDays);
    for (const item of batch) {
      const change = item.kind === 'chat' ? item.change : item.chat && (absent.has(item) ? item.chat : { ...item.chat, unread: 0 });
      if (!change) continue;
      const text = chatKeyText(item);
      chats.set(text, applyChatChange(chats.get(text), chatIdOf(item), change, since));
    }
    const chatPuts = new Map<string, Record<string, unknown>>();
    for (const item of batch) {
      const text = chatKeyText(item);
      const chat = chats.get(text);
      if (chat && !sameChat(before.get(text), chat)) chatPuts.set(text, chatItem(item.accountId, chat, table.retention?.messageDays));
    }
    try {
      await writeInSharedRequests(table, [
        ...[...absent].map((row) => ({ put: messageItem(row.accountId, row.message, row.marks, table.retention?.messageDays) })),
        ...[...chatPuts.values()].map((put) => ({ put })),
      ]);
    } catch (error) {
      for (const item of batch) known.delete(knownKey(item.accountId, chatIdOf(item)));
      throw error;
    }
    for (const item of batch) remember(item.accountId, chatIdOf(item), chats.get(chatKeyText(item)));
    return batch.map((item) => (item.kind === 'row' ? absent.has(item) : undefined));
  }

  const writes: Batcher<Item, boolean | undefined> = createBatcher({
    maxBatch: BATCH_WRITE_LIMIT,
    lingerMs: 0,
    maxInFlight: REQUESTS_IN_FLIGHT,
    // A chat's changes never travel in two requests at once: each is computed from the last.
    orderKeyOf: chatKeyText,
    async send(batch) {
      const [only] = batch;
      if (only && batch.length === 1) return [await sendAlone(only)];
      return sendTogether(batch);
    },
  });
  /** A later write of the same row waits for the one under way (and then finds its row). */
  const perRow = new KeyedSerial();

  return {
    putMessageIfAbsent: (accountId, message, marks, chat, holdChat) =>
      perRow.run(keyText(messageKey(accountId, message.messageId)), async () =>
        Boolean(await writes.add({ kind: 'row', accountId, message, marks, chat, ...(holdChat ? { holdChat } : {}) })),
      ),
    async change(accountId, chatId, change) {
      await writes.add({ kind: 'chat', accountId, chatId, change });
    },
    async find(accountId, chatId) {
      const before = recall(accountId, chatId);
      if (before !== undefined) return before === 'absent' ? undefined : before;
      return findChat(table, accountId, chatId);
    },
    forgetAccount(accountId) {
      generations.set(accountId, (generations.get(accountId) ?? 0) + 1);
    },
  };
}

/** The process's one writer of a table's new rows and chats (one cache, one order per chat). */
export const chatWriterOf = perTable(createChatWriter);
