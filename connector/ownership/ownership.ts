import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { acquireLease, findLease, findLeases, isLeaseLive, releaseLease, renewLease } from '../../core/store/leases.js';
import type { Table } from '../../core/store/table.js';

export interface OwnershipTiming {
  /** How long a lease lasts without renewal: the takeover time after a connector dies. */
  leaseTtlMs: number;
  /** How often held leases are renewed (well under the TTL). */
  renewEveryMs: number;
  /** How often accounts nobody runs are looked for. */
  scanEveryMs: number;
}

/** A connector's identity in lease records: readable in logs, unique per process start. */
export function newOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** The lease operations of one connector (see core/store/leases.ts for the timeline). */
export class Ownership {
  constructor(
    private readonly table: Table,
    readonly ownerId: string,
    readonly timing: OwnershipTiming,
  ) {}

  acquire(accountId: string): Promise<boolean> {
    return acquireLease(this.table, accountId, this.ownerId, this.timing.leaseTtlMs);
  }

  renew(accountId: string): Promise<boolean> {
    return renewLease(this.table, accountId, this.ownerId, this.timing.leaseTtlMs);
  }

  release(accountId: string): Promise<void> {
    return releaseLease(this.table, accountId, this.ownerId);
  }

  /** True when another connector holds a live lease on the account. */
  async ownedElsewhere(accountId: string): Promise<boolean> {
    const lease = await findLease(this.table, accountId);
    return isLeaseLive(lease) && lease.owner !== this.ownerId;
  }

  /** Of `accountIds`, those no live lease covers. */
  async unowned(accountIds: string[]): Promise<string[]> {
    if (accountIds.length === 0) return [];
    const leases = await findLeases(this.table, accountIds);
    const now = Date.now();
    return accountIds.filter((id) => !isLeaseLive(leases.get(id), now));
  }
}
