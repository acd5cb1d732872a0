import { randomBytes } from 'node:crypto';
import type { Logger } from '../../core/logger.js';
import type { OutboxItem, OutboxReceipt } from '../../core/schemas/event-outbox.js';
import { webhookEventSchema, type WebhookEvent } from '../../core/schemas/webhook-event.js';
import { deleteOutboxRequest, listOutboxItems, OUTBOX_TTL_SECONDS, putOutboxRequest } from '../../core/store/event-outbox.js';
import type { Table } from '../../core/store/table.js';
import { tableWrites, type TableWrites } from '../../core/store/table-writes.js';

/**
 * The outbox of the webhook events that no write-ahead record holds: a receipt's
 * `message.status` (receipts are not written ahead: Baileys acks them to WhatsApp at once, so
 * none comes again after a crash), and a reaction, edit, revoke or vote handled without a record.
 * An item is stored before the row change, and kept once the events are enqueued, as the
 * account's spent item, which the next hold of the account overwrites:
 *
 *   hold (put, awaited; over the spent item) ─► row write ─► enqueue ─► done: spent
 *                                                                     └► failed: stays for a replay
 *
 * A process killed anywhere in between leaves the item; the account's next login replays it
 * (`stranded`): a receipt is applied again (a move only goes forward) and its event enqueued
 * when the row is at that status or beyond, an event built whole is enqueued as it is. Both with
 * the ids they had, so a receiver sees at least once with a stable X-Webhook-Id. A spent item is
 * left out of this process's replays, and deleted when the account leaves the process (`leave`:
 * a stop or a hand-over); after a crash the next owner replays it too, so a crash repeats the
 * account's last status events once, under their ids.
 *
 * The item is its own write, not a mark on the row: a mark there rides the row's write for free
 * but is found after a crash only through an index (a sparse GSI costs a write to add the index
 * entry, a row update to clear the mark and a write to drop the entry, +3 write units and a
 * request that cannot be batched), while an item in the account's partition is found by the
 * Query the login already pays. Overwriting the spent item instead of deleting each one makes
 * it +1 write unit per batch of receipts Baileys hands over, most often one receipt
 * (docs/benchmarks.md); the put travels in the shared BatchWriteItem requests (table-writes.ts).
 */
export class EventOutbox {
  private readonly writer: TableWrites;
  /** Items of this process whose handling (or deletion) is not over: a replay leaves them alone. */
  private readonly inFlight = new Set<string>();
  /** Accounts whose handling here failed after an item was stored: the periodic replay reads theirs. */
  private readonly leftBehind = new Set<string>();
  /** Per account, the id of a stored item whose events are all enqueued: the next hold overwrites it. */
  private readonly spent = new Map<string, string>();
  /** Per account, the hand-offs items wait for (`doneWhen`): an account leaving waits for them. */
  private readonly settling = new Map<string, Set<Promise<void>>>();

  constructor(
    private readonly table: Table,
    private readonly log: Logger,
  ) {
    this.writer = tableWrites(table);
  }

  /** Resolves once the item is stored: only then may the row change it announces be written. */
  async hold(accountId: string, entry: { receipts?: OutboxReceipt[]; events?: WebhookEvent[] }): Promise<OutboxItem> {
    const now = Date.now();
    const reused = this.spent.get(accountId);
    this.spent.delete(accountId);
    const item: OutboxItem = {
      accountId,
      id: reused ?? randomBytes(9).toString('base64url'),
      ...(entry.receipts?.length ? { receipts: entry.receipts } : {}),
      ...(entry.events?.length ? { events: JSON.stringify(entry.events) } : {}),
      createdAt: now,
      expiresAt: Math.floor(now / 1000) + OUTBOX_TTL_SECONDS,
    };
    this.inFlight.add(inFlightKey(item));
    try {
      await this.writer.add(putOutboxRequest(item));
    } catch (error) {
      this.inFlight.delete(inFlightKey(item));
      throw error;
    }
    return item;
  }

  /** Its events are enqueued (or none was due): the item is spent, for the next hold to overwrite. */
  done(item: OutboxItem): void {
    if (!this.spent.has(item.accountId)) {
      this.inFlight.delete(inFlightKey(item));
      this.spent.set(item.accountId, item.id);
      return;
    }
    // Two holds of the account overlapped (the next socket's queue started before the last one
    // drained): one spent item is enough.
    void this.remove(item.accountId, item.id)
      .catch((error: unknown) => {
        // The item stays: a later replay enqueues its events again, under the same ids.
        this.leftBehind.add(item.accountId);
        this.log.warn({ err: error, accountId: item.accountId }, 'event outbox item not deleted');
      })
      .finally(() => this.inFlight.delete(inFlightKey(item)));
  }

  /**
   * Its events were handed to straight delivery: the item is done once `handOff` resolves
   * (served, or the retries queued), and stays for a replay if it rejects.
   */
  doneWhen(item: OutboxItem, handOff: Promise<void>): void {
    const settled = handOff.then(
      () => this.done(item),
      (error: unknown) => {
        this.log.error({ err: error, accountId: item.accountId }, 'webhook events not handed off: their outbox item stays for a replay');
        this.failed(item);
      },
    );
    const account = this.settling.get(item.accountId) ?? new Set<Promise<void>>();
    this.settling.set(item.accountId, account);
    account.add(settled);
    void settled.finally(() => {
      account.delete(settled);
      if (account.size === 0 && this.settling.get(item.accountId) === account) this.settling.delete(item.accountId);
    });
  }

  /** The account leaves this process: its spent item goes, so that the next owner replays nothing twice. */
  async leave(accountId: string): Promise<void> {
    // Items still waiting for a hand-off (bounded by WEBHOOK_STRAIGHT_WAIT_MS) are spent first.
    await Promise.allSettled([...(this.settling.get(accountId) ?? [])]);
    const id = this.spent.get(accountId);
    this.spent.delete(accountId);
    this.leftBehind.delete(accountId);
    if (id !== undefined) await this.writer.add(deleteOutboxRequest(accountId, id));
  }

  /** The handling failed: the item stays for the account's next replay. */
  failed(item: OutboxItem): void {
    this.inFlight.delete(inFlightKey(item));
    this.leftBehind.add(item.accountId);
  }

  /**
   * The account's items no handling here waits for. Read at a login (a previous process may have
   * died holding some), otherwise only when this process left one behind: a quiet account costs
   * no read between logins.
   */
  async stranded(accountId: string, atLogin: boolean): Promise<OutboxItem[]> {
    if (!atLogin && !this.leftBehind.has(accountId)) return [];
    this.leftBehind.delete(accountId);
    const items = await listOutboxItems(this.table, accountId).catch((error: unknown) => {
      this.leftBehind.add(accountId);
      throw error;
    });
    // Oldest first: an overwritten item's id says nothing of its age.
    return items
      .filter((item) => !this.inFlight.has(inFlightKey(item)) && this.spent.get(accountId) !== item.id)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  /** An item whose events went out again (replayed), or a second spent one. */
  async remove(accountId: string, id: string): Promise<void> {
    await this.writer.add(deleteOutboxRequest(accountId, id), DELETION_LINGER_MS);
  }

  /** A replay that failed on an item: it stays, and the next periodic replay reads it again. */
  keep(accountId: string): void {
    this.leftBehind.add(accountId);
  }
}

/** The events of an item built whole. */
export function outboxEvents(item: OutboxItem): WebhookEvent[] {
  if (!item.events) return [];
  const parsed: unknown = JSON.parse(item.events);
  return Array.isArray(parsed) ? parsed.map((event) => webhookEventSchema.parse(event)) : [];
}

const inFlightKey = (item: Pick<OutboxItem, 'accountId' | 'id'>) => `${item.accountId}\n${item.id}`;

/** As a write-ahead record's deletion (inbox.ts): it waits for a pressing write to travel with. */
const DELETION_LINGER_MS = 50;
