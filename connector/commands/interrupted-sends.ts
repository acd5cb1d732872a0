import { BoundedCache } from '../../core/bounded-cache.js';
import type { StatusMove } from '../../core/message-status.js';
import type { MessageStatus } from '../../core/schemas/message.js';
import { findMessageRecord } from '../../core/store/messages.js';
import { markOutboundSent, markOutboundUnknown } from '../../core/store/outbound.js';
import type { Table } from '../../core/store/table.js';
import type { EarlyStatuses } from '../inbound/status.js';

/**
 * Sends whose connector stopped between handing the message to WhatsApp and recording it
 * (`sending` when their command came back): resolved as `sent` when WhatsApp shows it has the
 * message, instead of staying `unknown` ("may have been delivered").
 *
 * The evidence is a receipt for the message id: WhatsApp's ack or the recipient's delivery or
 * read receipt, which reach the account once it is connected again (queued while it was not).
 * A receipt that came before the command either moved the message's row on (the stopped
 * connector stored it before it could record the send: the row starts `pending`, only a receipt
 * moves it) or, finding no row, waits among the early statuses (inbound/status.ts); one that comes after
 * finds the send in `waiting` here. Either way the outbound record moves to `sent`, and a
 * client that got no answer, or a 500 "may have been delivered", and asks again with its
 * Idempotency-Key is answered 200. The message is never sent again. Without a row it stays
 * out of the lists: its content went with the process that sent it. Kept in this process only:
 * a receipt that reaches another connector (the account moved again) leaves the send `unknown`.
 */

/** Statuses only a message WhatsApp took can reach. */
const TAKEN: ReadonlySet<MessageStatus> = new Set(['sent', 'delivered', 'read', 'played']);

/** A receipt may come while the recipient's phone is off: as long as the outbound record lives. */
const WAITING_TTL_MS = 24 * 60 * 60_000;
const WAITING_LIMIT = 10_000;

/**
 * How a send handler resolves a send whose command found it `sending`. The inbound pipeline does
 * it (inbound/sent-status.ts): its evidence is a receipt, and receipts are handled there, under
 * the message's status lock.
 */
export interface InterruptedSendResolver {
  /**
   * A send command came back while its send is `sending` (its connector stopped mid-send): the
   * send becomes `sent` when a receipt shows WhatsApp has the message, otherwise `unknown` with
   * `reason` until one comes (InterruptedSends). It is not sent again either way.
   */
  resolveInterruptedSend(accountId: string, messageId: string, reason: string): Promise<'sent' | 'unknown'>;
}

export class InterruptedSends {
  /** `${accountId}\n${messageId}` of the sends left `unknown` here, until a receipt resolves them. */
  private readonly waiting = new BoundedCache<string, true>('interrupted-sends', WAITING_LIMIT, WAITING_TTL_MS);

  constructor(
    private readonly table: Table,
    private readonly earlyStatuses: EarlyStatuses,
  ) {}

  /**
   * A command came back while its send is `sending`: `sent` when a receipt for it came already,
   * otherwise `unknown` with `reason`, resolved later by a receipt (`receipt`). The
   * caller holds the message's status lock, so that a receipt is not handled meanwhile.
   */
  async resolve(key: string, accountId: string, messageId: string, reason: string): Promise<'sent' | 'unknown'> {
    const taken =
      this.earlyStatuses.peek(key).find((move) => TAKEN.has(move.status)) ?? (await this.rowMovedByReceipt(accountId, messageId));
    if (taken && (await markOutboundSent(this.table, accountId, messageId, taken.at))) return 'sent';
    await markOutboundUnknown(this.table, accountId, messageId, reason);
    this.waiting.set(key, true);
    return 'unknown';
  }

  /** A receipt for a message the account sent (under the message's status lock): resolves a send waiting for it. */
  async receipt(key: string, accountId: string, messageId: string, move: StatusMove): Promise<boolean> {
    if (!TAKEN.has(move.status) || !this.waiting.get(key)) return false;
    this.waiting.delete(key);
    return markOutboundSent(this.table, accountId, messageId, move.at);
  }

  /** The message's row, when a receipt moved it past `pending`: its status and when. */
  private async rowMovedByReceipt(accountId: string, messageId: string): Promise<StatusMove | undefined> {
    const row = (await findMessageRecord(this.table, accountId, messageId))?.message;
    if (!row?.fromMe || !row.status || !TAKEN.has(row.status)) return undefined;
    return { status: row.status, at: row.statusAt ?? Date.now() };
  }
}
