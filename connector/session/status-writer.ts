import type { Logger } from '../../core/logger.js';
import type { AccountStatus, StatusReason } from '../../core/schemas/account.js';
import { updateAccountStatus } from '../../core/store/accounts.js';
import type { Table } from '../../core/store/table.js';
import type { SessionEvents } from './session-events.js';

/** A change of an account's status as a session or the registry decides it. */
export interface StatusChange {
  accountId: string;
  status: AccountStatus;
  previousStatus: AccountStatus;
  hasQR?: boolean;
  /** Why (docs/webhooks.md): the `session.status` event's reason and, for a disconnect, `lastDisconnect`'s. */
  reason?: StatusReason;
  /** Reported (event and `lastDisconnect`) even when the status stays: a refused version. */
  report?: boolean;
  /** When there is no reason: why no event goes out, logged instead. */
  silentBecause?: string;
}

/** What the store is told: the status, the QR flag and, for a disconnect, `lastDisconnect`. */
export interface StatusWrite {
  status: AccountStatus;
  hasQR: boolean;
  lastDisconnect?: { reason: StatusReason; at: number };
}

/**
 * The one writer of an account's status in the connector (docs/webhooks.md, session events):
 * every change is logged and emitted as one `session.status` event with its reason, or logged
 * with why it emits none, and written with `lastDisconnect` when it is a disconnect. A session
 * announces a change when it decides it and writes it in its own order (`announce`, then
 * `write`); the registry, with no session, does both at once (`record`). The API's own write of
 * `connecting` (the caller's request, which emits no event) is the only status written elsewhere.
 */
export class AccountStatusWriter {
  constructor(private readonly deps: { table: Table; events: SessionEvents; logger: Logger }) {}

  /** Logs the change and emits its event now; what to write. A status that stays is neither (unless reported). */
  announce(change: StatusChange, timestamp = Date.now()): StatusWrite {
    const { accountId, status, previousStatus, reason } = change;
    const hasQR = change.hasQR ?? false;
    const changed = status !== previousStatus || change.report === true;
    if (!changed) return { status, hasQR };
    this.deps.logger.info({ accountId, status, hasQR, previousStatus, reason }, 'account status');
    if (reason) this.deps.events.status(accountId, { status, previousStatus, reason, timestamp });
    else if (change.silentBecause) this.deps.logger.info({ accountId, status, why: change.silentBecause }, 'no session.status event');
    else this.deps.logger.error({ accountId, status, previousStatus }, 'status changed without a reason: no session.status event');
    return { status, hasQR, ...(reason && reason !== 'connected' ? { lastDisconnect: { reason, at: timestamp } } : {}) };
  }

  /** Writes what `announce` decided; throws NotFoundError when the account is gone. */
  write(accountId: string, write: StatusWrite): Promise<void> {
    return updateAccountStatus(this.deps.table, accountId, write);
  }

  /** Announces and writes at once. */
  record(change: StatusChange): Promise<void> {
    return this.write(change.accountId, this.announce(change));
  }
}
