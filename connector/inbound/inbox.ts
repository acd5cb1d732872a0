import type { Logger } from '../../core/logger.js';
import type { InboxRecord } from '../../core/schemas/inbox.js';
import { deleteInboxRequest, INBOX_TTL_SECONDS, listInboxRecords, putInboxRequest } from '../../core/store/inbox.js';
import type { Table } from '../../core/store/table.js';
import { tableWrites, type TableWrites } from '../../core/store/table-writes.js';

/** What names a record (its key), without the plaintext. */
type InboxRecordId = Pick<InboxRecord, 'accountId' | 'messageId' | 'part'>;

/** What the decryption hands over: one decrypted `enc` child of a message stanza. */
export interface DecryptedPart {
  /** The `<message>` stanza's attributes. */
  stanza: Record<string, string>;
  /** The child's position in the stanza. */
  part: number;
  encType: string;
  plaintext: Uint8Array;
}

/**
 * The inbound write-ahead log of one account: a record per decrypted part, written before the
 * delivery receipt (durable-decrypt.ts) and deleted once the message is stored and its webhook
 * event enqueued (`retire`). Records whose message this process is not handling are
 * `stranded` and replayed through the pipeline (inbox-replay.ts).
 *
 * The writes and deletes of every account on one table go through one group commit
 * (table-writes.ts): a record leaves at once when a slot is free, and whatever arrives while
 * requests are out goes in the next one, so a burst costs one BatchWriteItem per up to 25
 * records, not a round trip each. A deletion is in no hurry: it waits for the next record (at a
 * steady rate, the next message's) and leaves in the same request.
 */
/**
 * A decryption finished after the session stopped (the account runs elsewhere now). Baileys had
 * the stanza before the stop and retries its key commit for half a minute per message; a record
 * written then would land long after the next owner's login replay, and stay until its periodic
 * one. Not recording fails the decryption, so no receipt leaves and WhatsApp delivers the message
 * to the next owner, as the closed auth state already ensures for its keys.
 */
export class InboxClosedError extends Error {
  constructor(accountId: string) {
    super(`write-ahead inbox of ${accountId} is closed: the account runs elsewhere now`);
    this.name = 'InboxClosedError';
  }
}

export class Inbox {
  private readonly writer: TableWrites;
  private closed = false;
  /** Message id -> its records written by this process whose upsert has not been handled yet. */
  private readonly inFlight = new Map<string, { records: InboxRecordId[]; since: number; stored?: true; handOff?: Promise<void> }>();
  /** Hand-offs whose message was handled: its records go when they succeed. */
  private readonly handOffs = new Set<Promise<void>>();
  private readonly deletions = new Set<Promise<void>>();

  constructor(
    private readonly table: Table,
    private readonly accountId: string,
    private readonly log: Logger,
  ) {
    this.writer = tableWrites(table);
  }

  /** Resolves once the part is stored: only then may its receipt leave. */
  async record(part: DecryptedPart): Promise<void> {
    if (this.closed) throw new InboxClosedError(this.accountId);
    const messageId = part.stanza.id;
    if (!messageId) return;
    if (part.plaintext.byteLength > MAX_PLAINTEXT_BYTES) {
      // Beyond DynamoDB's item size: refusing would make Baileys ask for the message again forever.
      this.log.warn({ messageId, bytes: part.plaintext.byteLength }, 'decrypted message too large for the write-ahead log: not recorded');
      return;
    }
    const now = Date.now();
    const record: InboxRecord = {
      accountId: this.accountId,
      messageId,
      part: part.part,
      encType: part.encType,
      stanza: part.stanza,
      plaintext: part.plaintext,
      receivedAt: now,
      expiresAt: Math.floor(now / 1000) + INBOX_TTL_SECONDS,
    };
    const id: InboxRecordId = { accountId: this.accountId, messageId, part: part.part };
    let entry = this.inFlight.get(messageId);
    if (entry) entry.records.push(id);
    else this.inFlight.set(messageId, (entry = { records: [id], since: now }));
    await this.writer.add(putInboxRequest(record));
    entry.stored = true;
  }

  /**
   * A record of the message is stored and stays until the handling of its upsert by this
   * process ends (`retire` deletes it only then): the record can hold the message's event
   * obligation instead of an outbox marker on its row (docs/guarantees.md).
   */
  holds(messageId: string): boolean {
    return this.inFlight.get(messageId)?.stored === true;
  }

  /**
   * The message's event was handed to straight delivery (connector/webhooks/straight-delivery.ts)
   * and is handed off when `handOff` resolves (served, or its retry queued), or its chat's put
   * waits for company (core/store/chat-writer.ts): the records hold that work until then, so
   * `retire` waits for it, and a rejection keeps them for a replay. The account's next messages
   * are handled meanwhile: a slow receiver holds the record, not them.
   */
  holdUntil(messageId: string, handOff: Promise<void>): void {
    const entry = this.inFlight.get(messageId);
    if (!entry) {
      // No record to hold it (handled already, or never written): the caller's loss to log.
      handOff.catch((error: unknown) => this.log.warn({ err: error, messageId }, 'webhook event or chat write not done'));
      return;
    }
    const combined = entry.handOff ? Promise.all([entry.handOff, handOff]).then(() => undefined) : handOff;
    // Awaited at `retire`; a rejection before then is not an unhandled one.
    combined.catch(() => undefined);
    entry.handOff = combined;
  }

  /** The message is stored and its event handed off (or to be, `holdUntil`): its records go (in the background). */
  retire(messageId: string): void {
    const entry = this.inFlight.get(messageId);
    if (!entry) return;
    const { handOff } = entry;
    if (handOff) {
      entry.handOff = undefined;
      const settled = handOff.then(
        () => this.retire(messageId),
        (error: unknown) => {
          // The replay hands the event off (or writes the chat) again.
          this.log.warn({ err: error, messageId }, 'webhook event or chat write not done: its write-ahead record stays for a replay');
          this.release(messageId);
        },
      );
      this.handOffs.add(settled);
      void settled.finally(() => this.handOffs.delete(settled));
      return;
    }
    this.inFlight.delete(messageId);
    const deletion = this.remove(entry.records).catch((error: unknown) => {
      // The records stay; a replay finds the message stored and deletes them then.
      this.log.warn({ err: error, messageId }, 'write-ahead record not deleted');
    });
    this.deletions.add(deletion);
    void deletion.finally(() => this.deletions.delete(deletion));
  }

  /** Handling the message failed: its records stay for the next replay. */
  release(messageId: string): void {
    this.inFlight.delete(messageId);
  }

  /**
   * The account's records that no handling in this process is waiting for: those of earlier
   * processes, of failed handling, and of messages whose upsert never came within
   * `STRANDED_AFTER_MS` (the socket closed between the decryption and the event).
   */
  async stranded(): Promise<InboxRecord[]> {
    const records = await listInboxRecords(this.table, this.accountId);
    const now = Date.now();
    for (const [messageId, entry] of this.inFlight) {
      if (now - entry.since > STRANDED_AFTER_MS) this.inFlight.delete(messageId);
    }
    return records.filter((record) => !this.inFlight.has(record.messageId));
  }

  async remove(records: InboxRecordId[]): Promise<void> {
    await Promise.all(records.map((record) => this.writer.add(deleteInboxRequest(record), DELETION_LINGER_MS)));
  }

  /** The session stopped: no record is written any more (records and deletions under way finish). */
  close(): void {
    this.closed = true;
  }

  /** Resolves when the hand-offs waited for and the deletions started so far are done (stop, tests). */
  async drained(): Promise<void> {
    await Promise.allSettled([...this.handOffs]);
    await Promise.allSettled([...this.deletions]);
  }
}

/** Well under DynamoDB's 400 KB item limit, with room for the stanza attributes. */
const MAX_PLAINTEXT_BYTES = 300_000;
/** An upsert normally follows its decryption within milliseconds. */
const STRANDED_AFTER_MS = 2 * 60_000;
/**
 * How long a deletion waits for a record to travel with. A record still there when the account
 * resumes is only replayed against its stored message, and deleted then.
 */
const DELETION_LINGER_MS = 50;
