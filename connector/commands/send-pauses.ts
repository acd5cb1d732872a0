import type { Logger } from '../../core/logger.js';
import { activePause, nextPause, type SendPauseReason, type StoredSendPause } from '../../core/send-pause.js';
import { writeSendPause } from '../../core/store/accounts.js';
import type { Table } from '../../core/store/table.js';
import type { SessionEvents } from '../session/session-events.js';

export interface SendPausesDeps {
  table: Table;
  events: Pick<SessionEvents, 'limit'>;
  logger: Logger;
  /** The first pause (SEND_PAUSE_MIN_MS: 60 s, shorter in tests). */
  minMs: number;
}

/**
 * The send pauses of the accounts this connector runs (core/send-pause.ts), held in memory so
 * that the send path checks them with no request: a send costs no extra DynamoDB read on the
 * happy path. This connector is the one writer of an account's pause while it owns the account
 * (its lease), so memory and the account row agree; the row is what a restart or a hand-over
 * starts from (`load`, with the account read that starts every session), and what the API reads
 * to refuse a send before queuing it (functions/messages/send-wait.ts). Resuming is only time
 * passing: nothing is written when a pause ends.
 */
export class SendPauses {
  private readonly pauses = new Map<string, StoredSendPause>();

  constructor(private readonly deps: SendPausesDeps) {}

  /** A session starts here: the pause stored with the account (kept for the doubling even after it ended). */
  load(accountId: string, stored: StoredSendPause | undefined): void {
    if (stored) this.pauses.set(accountId, stored);
    else this.pauses.delete(accountId);
  }

  /** The pause in force for the account, if any. */
  active(accountId: string, now = Date.now()): StoredSendPause | undefined {
    return activePause(this.pauses.get(accountId), now);
  }

  /**
   * WhatsApp refused a send handed to it at `sentAt` with a pausing error: the account pauses
   * (or its pause doubles), durably, with an `account.limit` event. Resolves once the pause is
   * stored, so that a client told of the refusal finds it on the account; a failed write is
   * logged and the pause still holds here.
   */
  async refused(accountId: string, reason: SendPauseReason, sentAt: number, now = Date.now()): Promise<StoredSendPause | undefined> {
    const pause = nextPause(this.pauses.get(accountId), { reason, sentAt, now }, this.deps.minMs);
    const log = this.deps.logger;
    if (!pause) {
      log.info({ accountId, reason }, 'send refused by WhatsApp while the account was pausing; pause unchanged');
      return undefined;
    }
    this.pauses.set(accountId, pause);
    log.warn({ accountId, reason, until: pause.until, pauseMs: pause.durationMs }, "account's sending paused: WhatsApp refused a send");
    try {
      await writeSendPause(this.deps.table, accountId, pause);
    } catch (error) {
      log.error({ err: error, accountId }, 'storing the send pause failed; it holds in this connector only');
    }
    this.deps.events.limit(accountId, { reason, until: pause.until, timestamp: now });
    return pause;
  }
}
