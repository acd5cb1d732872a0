import { getHistoryMsg, processHistoryMessage, type Contact, type WAMessage, type WASocket } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
import type { Logger } from '../../core/logger.js';
import type { AccountSettings } from '../../core/schemas/settings.js';
import { SerialQueue } from '../../core/serial.js';
import { chatWriterOf, type ChatWriter } from '../../core/store/chat-writer.js';
import { historyMediaPut } from '../../core/store/history-media.js';
import type { Table } from '../../core/store/table.js';
import { writeInSharedRequests } from '../../core/store/table-writes.js';
import type { FetchDispatcher } from '../network/network-options.js';
import type { ContactBook } from '../session/contact-book.js';
import type { SessionEvents } from '../session/session-events.js';
import { fetchHistorySync } from './fetch-sync.js';
import { planChunk, settingImports, syncKindOf, type ChunkPlan } from './history-chunk.js';

/**
 * History rows (or chat changes) handed to the process's chat writer at once. The writer is
 * shared with live traffic (core/store/chat-writer.ts): with no more than two of its requests
 * of history queued, a live message waits behind at most those, never behind a whole chunk.
 */
const WRITES_AT_ONCE = 50;
/**
 * Contacts this import reported to the contact book, with what it said of them. Each chat comes
 * in RECENT and again in FULL (and in every chunk a long chat spans): the contact book keeps only
 * the last 200 contacts, so without this a big history wrote each contact two or more times.
 */
const CONTACTS_REPORTED = 10_000;

export interface HistoryImportDeps {
  accountId: string;
  table: Table;
  log: Logger;
  settings(): AccountSettings;
  contacts: ContactBook;
  events: SessionEvents;
  /** Trusts the sandbox's media host (network-options.ts); undefined: the default trust store. */
  dispatcher: FetchDispatcher | undefined;
}

/**
 * The account's history imports (docs/history.md): one chunk at a time, in the order the
 * notifications came, beside the inbound queue (live messages never wait for an import).
 *
 * Crash safety. Baileys sends the phone its receipts for a history notification (`peer_msg`,
 * then `hist_sync`) as soon as it decrypted it, before it downloads the chunk
 * (Socket/messages-recv.js `handleMessage`), so the phone never sends that chunk again. What
 * holds it instead is the notification's write-ahead record, stored before those receipts
 * (session/durable-decrypt.ts): it is retired only once the chunk is stored, and a record left
 * by a crash is replayed at the next login (write-ahead-replay.ts), which downloads and imports
 * the chunk again. Importing twice changes nothing: a row is written only when its message id
 * is not stored (live or historical: a live row is never overwritten), the chats' unread count
 * is a floor and their time only moves forward, and the `history.sync` event has the same id.
 */
export class HistoryImport {
  private readonly queue = new SerialQueue();
  private readonly writer: ChatWriter;
  private closed = false;
  private readonly reported = new BoundedCache<string, string>('history-contacts', CONTACTS_REPORTED, 30 * 60_000);
  /** Notification ids whose chunk is queued or under way, with how many times. */
  private readonly pending = new Map<string, number>();

  constructor(private readonly deps: HistoryImportDeps) {
    this.writer = chatWriterOf(deps.table);
  }

  /** Whether `message` is a notification of a history this import handles (its conversations). */
  static handles(message: WAMessage): boolean {
    const notification = message.message ? getHistoryMsg(message.message) : undefined;
    return notification !== undefined && notification !== null && syncKindOf(notification) !== undefined;
  }

  /**
   * Imports the chunk `message` announces, after those queued before it. Resolves once it is
   * stored (or not wanted: settings.history); rejects when it failed.
   */
  run(sock: WASocket, message: WAMessage, selfJid: string): Promise<void> {
    const id = message.key.id ?? '';
    this.pending.set(id, (this.pending.get(id) ?? 0) + 1);
    return this.queue
      .run(() => this.importChunk(sock, message, selfJid))
      .finally(() => {
        const left = (this.pending.get(id) ?? 1) - 1;
        if (left > 0) this.pending.set(id, left);
        else this.pending.delete(id);
      });
  }

  /** Whether the chunk of this notification is queued or under way. */
  has(notificationId: string): boolean {
    return this.pending.has(notificationId);
  }

  /**
   * The session stops: imports not finished fail between two writes (their records stay for
   * whoever runs the account next), and resolves once none is under way.
   */
  close(): Promise<void> {
    this.closed = true;
    return this.queue.drained();
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('history import stopped with its session: the chunk is left to the write-ahead replay');
  }

  private async importChunk(sock: WASocket, message: WAMessage, selfJid: string): Promise<void> {
    const notification = message.message ? getHistoryMsg(message.message) : undefined;
    const kind = notification ? syncKindOf(notification) : undefined;
    const notificationId = message.key.id;
    if (!notification || !kind || !notificationId) return;
    this.checkOpen();
    const { accountId, log } = this.deps;
    const mode = this.deps.settings().history;
    if (!settingImports(mode, kind)) {
      log.info({ syncType: kind, history: mode }, 'history sync not imported (settings.history)');
      return;
    }
    const started = Date.now();
    const data = processHistoryMessage(await fetchHistorySync(sock, notification, this.deps.dispatcher));
    if (data.lidPnMappings.length > 0) {
      await sock.signalRepository.lidMapping
        .storeLIDPNMappings(data.lidPnMappings)
        .catch((error: unknown) => log.warn({ err: error }, 'LID mappings of a history sync not stored'));
    }
    // Baileys itself reports the contacts of the bootstrap, which it processes (history-sync.ts).
    if (kind !== 'bootstrap') await this.learnContacts(data.contacts);
    const plan = planChunk(data, selfJid, this.deps.contacts, { ignoreGroups: this.deps.settings().ignoreGroups });
    const stored = await this.store(plan);
    const progress = Math.min(100, Math.max(0, Math.round(notification.progress ?? data.progress ?? 100)));
    if (plan.chats.length > 0 || plan.messages.length > 0) {
      this.deps.events.history(accountId, {
        notificationId,
        syncType: kind,
        progress,
        chats: plan.chats.length,
        messages: plan.messages.length,
        timestamp: Date.now(),
      });
    }
    log.info(
      { syncType: kind, progress, chats: plan.chats.length, messages: plan.messages.length, newRows: stored, ms: Date.now() - started },
      'history chunk imported',
    );
  }

  /** Reports the chunk's contacts to the contact book, except those reported already as they are. */
  private async learnContacts(contacts: readonly Contact[]): Promise<void> {
    const fresh = contacts.filter((contact) => {
      const said = JSON.stringify([contact.name, contact.notify, contact.lid, contact.phoneNumber]);
      if (this.reported.get(contact.id) === said) return false;
      this.reported.set(contact.id, said);
      return true;
    });
    if (fresh.length > 0) await this.deps.contacts.learn(fresh);
  }

  /**
   * Writes what finds the chunk's media, then its rows, then its chats, a few requests at a time
   * (a row never exists without its media's whereabouts); answers how many rows were new.
   */
  private async store(plan: ChunkPlan): Promise<number> {
    const { accountId, table } = this.deps;
    if (plan.media.length > 0) {
      await writeInSharedRequests(
        table,
        plan.media.map((media) => historyMediaPut(accountId, media, media.content, table.retention?.messageDays)),
      );
    }
    let stored = 0;
    for (let i = 0; i < plan.messages.length; i += WRITES_AT_ONCE) {
      this.checkOpen();
      const rows = plan.messages.slice(i, i + WRITES_AT_ONCE);
      const written = await Promise.all(rows.map((message) => this.writer.putMessageIfAbsent(accountId, message)));
      stored += written.filter(Boolean).length;
    }
    for (let i = 0; i < plan.chats.length; i += WRITES_AT_ONCE) {
      await Promise.all(plan.chats.slice(i, i + WRITES_AT_ONCE).map(({ chatId, change }) => this.writer.change(accountId, chatId, change)));
    }
    return stored;
  }
}
