import { proto } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
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

/**
 * How long a receipt waits for the row of its message (the send stores it right after). Longer
 * than a command takes to come back after its connector stopped (a held command is visible again
 * within 10 s; the queue's own visibility is 120 s): a receipt of a send whose connector stopped
 * before storing it is the evidence that resolves the send when its command comes back
 * (commands/interrupted-sends.ts).
 */
const EARLY_TTL_MS = 10 * 60_000;
const EARLY_LIMIT = 10_000;

/**
 * Receipts that came before the row of their message was written (WhatsApp acks and the other
 * side's phone receipts can overtake the store of a message just sent): kept in memory for a
 * while, and taken by the write of that message's row. Bounded (the least recently touched go
 * first) and visible in the metrics as the `early-statuses` cache.
 */
export class EarlyStatuses {
  private readonly entries = new BoundedCache<string, StatusMove[]>('early-statuses', EARLY_LIMIT, EARLY_TTL_MS);

  remember(key: string, move: StatusMove, now = Date.now()): void {
    const moves = this.entries.get(key, now);
    // Appended in place: the entry keeps the time of its first receipt.
    if (moves) moves.push(move);
    else this.entries.set(key, [move], now);
  }

  /** The moves kept for `key`, kept. */
  peek(key: string, now = Date.now()): readonly StatusMove[] {
    return this.entries.get(key, now) ?? [];
  }

  /** The moves kept for `key`, forgotten now. */
  take(key: string, now = Date.now()): StatusMove[] {
    const moves = this.entries.get(key, now);
    this.entries.delete(key);
    return moves ?? [];
  }
}
