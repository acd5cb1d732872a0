import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { isConditionalCheckFailed } from '../errors.js';
import { leaseKey } from '../keys.js';
import { batchGet } from './batch.js';
import { withoutKeys, writeIfCondition, type Table } from './table.js';

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

const TTL_GRACE_SECONDS = 24 * 60 * 60;

/** Conditions, named once. */
const LEASE_FREE_OR_MINE = 'attribute_not_exists(pk) OR leaseExpiresAt < :now OR #owner = :owner';
const LEASE_MINE = '#owner = :owner';

function leaseItem(accountId: string, owner: string, ttlMs: number, now: number) {
  const leaseExpiresAt = now + ttlMs;
  return {
    ...leaseKey(accountId),
    accountId,
    owner,
    leaseExpiresAt,
    expiresAt: Math.floor(leaseExpiresAt / 1000) + TTL_GRACE_SECONDS,
  };
}

/** Takes the lease when it is absent, expired or already ours. False when another owner holds it. */
export async function acquireLease(table: Table, accountId: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: leaseItem(accountId, owner, ttlMs, now),
        ConditionExpression: LEASE_FREE_OR_MINE,
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':now': now, ':owner': owner },
      }),
    ),
  );
}

/**
 * Extends a lease we hold. False when it is no longer ours (taken over after it expired, or
 * removed with the account): the caller must close the socket at once.
 */
export async function renewLease(table: Table, accountId: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const item = leaseItem(accountId, owner, ttlMs, now);
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: leaseKey(accountId),
        UpdateExpression: 'SET leaseExpiresAt = :until, expiresAt = :ttl',
        ConditionExpression: LEASE_MINE,
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner, ':until': item.leaseExpiresAt, ':ttl': item.expiresAt },
      }),
    ),
  );
}

/** Gives a lease up so another connector may take the account at once; a lease not ours is left alone. */
export async function releaseLease(table: Table, accountId: string, owner: string): Promise<void> {
  try {
    await table.doc.send(
      new DeleteCommand({
        TableName: table.name,
        Key: leaseKey(accountId),
        ConditionExpression: LEASE_MINE,
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
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
