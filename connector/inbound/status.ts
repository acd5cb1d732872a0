import { proto } from '@whiskeysockets/baileys';
import type { StatusMove } from '../../core/message-status.js';
import type { MessageStatus } from '../../core/schemas/message.js';

const BAILEYS_STATUSES: Record<number, MessageStatus> = {
  [proto.WebMessageInfo.Status.ERROR]: 'failed',
  [proto.WebMessageInfo.Status.PENDING]: 'pending',
  [proto.WebMessageInfo.Status.SERVER_ACK]: 'sent',
  [proto.WebMessageInfo.Status.DELIVERY_ACK]: 'delivered',
  [proto.WebMessageInfo.Status.READ]: 'read',
  [proto.WebMessageInfo.Status.PLAYED]: 'played',
};

/** The gateway's status of Baileys' WebMessageInfo status (undefined: none given). */
export function statusFromBaileys(status: number | null | undefined): MessageStatus | undefined {
  return status === null || status === undefined ? undefined : BAILEYS_STATUSES[status];
}

/** How long a receipt waits for the row of its message (the send stores it right after). */
const EARLY_TTL_MS = 2 * 60_000;
const EARLY_LIMIT = 10_000;

/**
 * Receipts that came before the row of their message was written (WhatsApp acks and the other
 * side's phone receipts can overtake the store of a message just sent): kept in memory for a
 * while, and taken by the write of that message's row. Bounded: the oldest are dropped first.
 */
export class EarlyStatuses {
  private readonly entries = new Map<string, { moves: StatusMove[]; expiresAt: number }>();

  remember(key: string, move: StatusMove, now = Date.now()): void {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) {
      entry.moves.push(move);
      return;
    }
    this.entries.delete(key);
    if (this.entries.size >= EARLY_LIMIT) this.dropExpiredOrOldest(now);
    this.entries.set(key, { moves: [move], expiresAt: now + EARLY_TTL_MS });
  }

  /** The moves kept for `key`, forgotten now. */
  take(key: string, now = Date.now()): StatusMove[] {
    const entry = this.entries.get(key);
    if (!entry) return [];
    this.entries.delete(key);
    return entry.expiresAt > now ? entry.moves : [];
  }

  private dropExpiredOrOldest(now: number): void {
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    if (this.entries.size < EARLY_LIMIT) return;
    const oldest = this.entries.keys().next().value;
    if (oldest !== undefined) this.entries.delete(oldest);
  }
}
