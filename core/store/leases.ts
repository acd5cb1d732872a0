import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { leaseKey } from '../keys.js';
import { batchGet } from './batch.js';
import { dropLease, extendLease, takeLease, type LeaseSpot } from './lease-writes.js';
import { withoutKeys, type Table } from './table.js';

/**
 * Ownership of an account's WhatsApp socket: exactly one connector may hold it. A lease names its
 * owner and expires unless renewed, so a connector that dies without releasing hands its accounts
 * over to another one after at most one lease period.
 *
 *   owner A:  acquire ──renew──renew──renew─╳ (dies)
 *   owner B:  acquire? no ... acquire? no ..........│...... acquire? yes (lease expired)
 *                                                   └ leaseExpiresAt
 *
 * `leaseExpiresAt` is Unix milliseconds of the writer's clock; `expiresAt` (epoch seconds, the
 * table's TTL attribute) lets DynamoDB remove leases of accounts nobody runs any more.
 */
const leaseSchema = z.object({
  accountId: z.string(),
  owner: z.string(),
  leaseExpiresAt: z.number(),
  expiresAt: z.number().int(),
});
export type Lease = z.infer<typeof leaseSchema>;

const accountLease = (accountId: string): LeaseSpot => ({ key: leaseKey(accountId), expiryAttribute: 'leaseExpiresAt' });

/** Takes the lease when it is absent, expired or already ours. False when another owner holds it. */
export function acquireLease(table: Table, accountId: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  return takeLease(table, accountLease(accountId), { accountId }, owner, ttlMs, now);
}

/**
 * Extends a lease we hold. False when it is no longer ours (taken over after it expired, or
 * removed with the account): the caller must close the socket at once.
 */
export function renewLease(table: Table, accountId: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  return extendLease(table, accountLease(accountId), owner, ttlMs, now);
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

/** True when the lease is held by someone and not yet expired. */
export function isLeaseLive(lease: Lease | undefined, now = Date.now()): lease is Lease {
  return lease !== undefined && lease.leaseExpiresAt >= now;
}
