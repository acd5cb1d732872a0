import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { leaseKey } from '../keys.js';
import { batchGet } from './batch.js';
import type { Heartbeat } from './connectors.js';
import { dropLease, type LeaseSpot } from './lease-writes.js';
import { withoutKeys, writeIfCondition, type Table } from './table.js';

/**
 * Ownership of an account's WhatsApp socket: exactly one connector may hold it. A lease names its
 * owner and the `epoch` of the owner's heartbeat (connectors.ts), and lives as long as that
 * heartbeat does: a connector keeps all its accounts with one write every few seconds, however
 * many it runs. When a connector dies its heartbeat expires, and another connector takes an
 * account over in two conditional writes: it declares the heartbeat dead (after which the owner
 * can never extend it), then replaces the lease it read.
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
 * Takes the lease when it is absent, an expired lease of the older kind, or already ours (of any
 * epoch: an older epoch of ours is dead, and we are its only heir). False otherwise: another
 * connector's lease, which `takeOverLease` may replace once its heartbeat is declared dead.
 */
export function acquireLease(table: Table, accountId: string, owner: string, epoch: string, now = Date.now()): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...leaseKey(accountId), accountId, owner, epoch },
        ConditionExpression: 'attribute_not_exists(pk) OR #until < :now OR #owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner', '#until': 'leaseExpiresAt' },
        ExpressionAttributeValues: { ':now': now, ':owner': owner },
      }),
    ),
  );
}

/**
 * Replaces `seen` (a lease whose heartbeat was declared dead) with ours; false when the lease
 * changed since it was read (released, or taken by someone else first).
 */
export function takeOverLease(table: Table, seen: Lease, owner: string, epoch: string): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...leaseKey(seen.accountId), accountId: seen.accountId, owner, epoch },
        ConditionExpression: '#owner = :seenOwner AND epoch = :seenEpoch',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':seenOwner': seen.owner, ':seenEpoch': seen.epoch ?? '' },
      }),
    ),
  );
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
