import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { leaseKey } from '../keys.js';
import { batchGet } from './batch.js';
import type { Heartbeat } from './heartbeats.js';
import { acquireHeldLease, dropLease, type LeaseSpot } from './lease-writes.js';
import { withoutKeys, type Table } from './table.js';

/**
 * Ownership of an account's WhatsApp socket: exactly one connector may hold it. A lease names its
 * owner and the `epoch` of the owner's heartbeat (heartbeats.ts), and lives as long as that
 * heartbeat does: a connector keeps all its accounts with one write every few seconds, however
 * many it runs. When a connector dies its heartbeat expires, and another connector takes an
 * account over in two conditional writes: it declares the heartbeat dead (after which the owner
 * can never extend it), then replaces the lease it read (lease-writes.ts, acquireHeldLease).
 *
 *   owner A:  acquire ──beat──beat──beat─╳ (dies)
 *   owner B:  acquire? A's heartbeat live: no ..........│...... acquire? A's heartbeat expired:
 *                                                       └ until          declare it dead, take
 *
 * Leases written before heartbeats held them carry their own `leaseExpiresAt` (Unix ms of the
 * writer's clock) and no epoch: they stay live until that moment, and are free after it.
 */
const leaseSchema = z.object({
  accountId: z.string(),
  owner: z.string(),
  epoch: z.string().optional(),
  leaseExpiresAt: z.number().optional(),
});
export type Lease = z.infer<typeof leaseSchema>;

const accountLease = (accountId: string): LeaseSpot => ({ key: leaseKey(accountId), expiryAttribute: 'leaseExpiresAt' });

/**
 * Takes the account's lease for `epoch` of this connector's heartbeat: when it is free or ours, or
 * when its owner's heartbeat has expired (declared dead first). False when a live connector holds it.
 */
export function acquireLease(table: Table, accountId: string, owner: string, epoch: string, now = Date.now()): Promise<boolean> {
  return acquireHeldLease(table, accountLease(accountId), { accountId }, owner, epoch, now);
}

/** Gives a lease up so another connector may take the account at once; a lease not ours is left alone. */
export function releaseLease(table: Table, accountId: string, owner: string): Promise<void> {
  return dropLease(table, accountLease(accountId), owner);
}

export async function findLease(table: Table, accountId: string): Promise<Lease | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: leaseKey(accountId), ConsistentRead: true }));
  return result.Item ? leaseSchema.parse(withoutKeys(result.Item)) : undefined;
}

/** Leases of many accounts at once, as accountId -> lease (accounts without one are absent). */
export async function findLeases(table: Table, accountIds: string[]): Promise<Map<string, Lease>> {
  const items = await batchGet(table, accountIds.map(leaseKey));
  const leases = new Map<string, Lease>();
  for (const item of items) {
    const lease = leaseSchema.parse(withoutKeys(item));
    leases.set(lease.accountId, lease);
  }
  return leases;
}

/** True when the lease is held: its owner's heartbeat of the same epoch is live (or, for a lease of the older kind, it has not expired). */
export function isLeaseHeld(lease: Lease | undefined, heartbeats: ReadonlyMap<string, Heartbeat>, now = Date.now()): lease is Lease {
  if (lease === undefined) return false;
  if (lease.epoch === undefined) return (lease.leaseExpiresAt ?? 0) >= now;
  const heartbeat = heartbeats.get(lease.owner);
  return heartbeat !== undefined && heartbeat.epoch === lease.epoch && heartbeat.until >= now;
}
