import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { listHeartbeats } from '../../core/store/heartbeats.js';
import { acquireLease, findLease, findLeases, isLeaseHeld, releaseLease } from '../../core/store/leases.js';
import type { Table } from '../../core/store/table.js';

export interface OwnershipTiming {
  /** How long a heartbeat (and so every lease it holds) lasts without a beat: the takeover time after a connector dies. */
  leaseTtlMs: number;
  /** How often the heartbeat beats and the shards are renewed and balanced (well under the TTL). */
  renewEveryMs: number;
  /** How often accounts nobody runs are looked for. */
  scanEveryMs: number;
}

/** A connector's identity in lease records: readable in logs, unique per process start. */
export function newOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** What holds this connector's account leases (connector/ownership/heartbeat.ts). */
export interface LeaseHolder {
  /** The live epoch; undefined while the heartbeat is lost. */
  readonly epoch: string | undefined;
}

/** The account lease operations of one connector (see core/store/leases.ts for the timeline). */
export class Ownership {
  constructor(
    private readonly table: Table,
    readonly ownerId: string,
    readonly timing: OwnershipTiming,
    private readonly heartbeat: LeaseHolder,
  ) {}

  /** The epoch new leases are written with: a session started under another one must not run. */
  get epoch(): string | undefined {
    return this.heartbeat.epoch;
  }

  /** Takes the account's lease for `epoch` (free, ours, or its owner's heartbeat expired: lease-writes.ts). */
  acquire(accountId: string, epoch: string): Promise<boolean> {
    return acquireLease(this.table, accountId, this.ownerId, epoch);
  }

  release(accountId: string): Promise<void> {
    return releaseLease(this.table, accountId, this.ownerId);
  }

  /** True when another connector holds a live lease on the account. */
  async ownedElsewhere(accountId: string): Promise<boolean> {
    const lease = await findLease(this.table, accountId);
    if (!lease || lease.owner === this.ownerId) return false;
    return isLeaseHeld(lease, await listHeartbeats(this.table));
  }

  /** Of `accountIds`, those no live lease of another connector covers. */
  async unowned(accountIds: string[]): Promise<string[]> {
    if (accountIds.length === 0) return [];
    const [leases, heartbeats] = await Promise.all([findLeases(this.table, accountIds), listHeartbeats(this.table)]);
    const now = Date.now();
    return accountIds.filter((id) => {
      const lease = leases.get(id);
      // Ours without a session here (a heartbeat lost and registered again): ours to start again.
      return lease?.owner === this.ownerId || !isLeaseHeld(lease, heartbeats, now);
    });
  }
}
