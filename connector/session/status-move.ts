import { NotFoundError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { AccountStatus } from '../../core/schemas/account.js';
import type { Table } from '../../core/store/table.js';
import { statusOf, type Lifecycle } from './lifecycle.js';
import { withdrawQr } from './qr-log.js';
import type { AccountStatusWriter, StatusWrite } from './status-writer.js';

/**
 * The status and QR flag a move to `next` writes: the lifecycle's own (`statusOf`), else the
 * `given` status for the lifecycles that keep the status they had (`stopped`, `halted`), its QR
 * flag kept while the status stays; undefined when the move writes nothing.
 */
export function moveTarget(
  next: Lifecycle,
  given: AccountStatus | undefined,
  current: { status: AccountStatus; hasQR: boolean },
): { status: AccountStatus; hasQR: boolean } | undefined {
  return statusOf(next) ?? (given ? { status: given, hasQR: given === current.status && current.hasQR } : undefined);
}

/** Where a session's status goes. */
export interface StatusStore {
  statusWriter: Pick<AccountStatusWriter, 'write'>;
  table: Table;
  log: Logger;
  accountId: string;
}

/**
 * Writes what a move announced, then withdraws the account's QR when the move took it away
 * (`qrWithdrawn`); `onGone` when the account record is gone, any other failure logged.
 */
export async function storeMove(store: StatusStore, write: StatusWrite, qrWithdrawn: boolean, onGone: () => void): Promise<void> {
  try {
    await store.statusWriter.write(store.accountId, write);
    if (qrWithdrawn) await withdrawQr(store.table, store.log, store.accountId);
  } catch (error) {
    if (error instanceof NotFoundError) {
      onGone();
      return;
    }
    store.log.error({ err: error, status: write.status }, 'status write failed');
  }
}
