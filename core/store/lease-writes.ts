import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed } from '../errors.js';
import type { Key } from '../keys.js';
import { declareDead, ttlOf } from './heartbeats.js';
import { writeIfCondition, type Table } from './table.js';

/**
 * The conditional writes behind every lease: an account's (leases.ts) and a shard's
 * (shard-leases.ts). A lease names its owner and the `epoch` of the owner's heartbeat
 * (heartbeats.ts), and lives as long as that heartbeat does: it is never renewed itself. Leases
 * of the older kind carry their own expiry instead (`expiryAttribute`, Unix ms of the writer's
 * clock); a handed-over shard lease has one too, already past.
 */
export interface LeaseSpot {
  key: Key;
  expiryAttribute: string;
}

/**
 * Heartbeat epochs this process has seen declared dead (`connectorId` and epoch). An epoch never
 * lives again once dead (a registration draws a new one), so the many leases of a dead connector
 * are taken over with one declaration, not one each. Bounded: the oldest are forgotten first.
 */
const deadEpochs = new Set<string>();
const DEAD_EPOCHS_KEPT = 1_000;

async function isDead(table: Table, owner: string, epoch: string): Promise<boolean> {
  const id = `${owner}\n${epoch}`;
  if (deadEpochs.has(id)) return true;
  if (!(await declareDead(table, owner, epoch))) return false;
  deadEpochs.add(id);
  if (deadEpochs.size > DEAD_EPOCHS_KEPT) deadEpochs.delete(deadEpochs.values().next().value as string);
  return true;
}

const FREE_OR_MINE = 'attribute_not_exists(pk) OR #until < :now OR #owner = :owner';
const MINE = '#owner = :owner';
const names = (spot: LeaseSpot) => ({ '#owner': 'owner', '#until': spot.expiryAttribute });

/**
 * Takes a lease for `epoch` of the owner's heartbeat. At once when it is absent, expired (of the
 * older kind, or handed over) or already ours (of any epoch: an older epoch of ours is dead, and
 * we are its only heir). When another connector's heartbeat holds it, only once that heartbeat
 * has expired: it is declared dead first, so that its owner can never extend it again, then the
 * lease read is replaced (on condition that it is still the one read). False when a live owner
 * holds it, or another taker came first.
 */
export async function acquireHeldLease(
  table: Table,
  spot: LeaseSpot,
  attributes: Record<string, unknown>,
  owner: string,
  epoch: string,
  now = Date.now(),
): Promise<boolean> {
  const put = (condition: string, extraNames: Record<string, string>, values: Record<string, unknown>) =>
    writeIfCondition(
      table.doc.send(
        new PutCommand({
          TableName: table.name,
          Item: { ...spot.key, ...attributes, owner, epoch },
          ConditionExpression: condition,
          ExpressionAttributeNames: { '#owner': 'owner', ...extraNames },
          ExpressionAttributeValues: values,
        }),
      ),
    );
  const takeFree = () => put(FREE_OR_MINE, { '#until': spot.expiryAttribute }, { ':now': now, ':owner': owner });
  if (await takeFree()) return true;
  const found = await table.doc.send(new GetCommand({ TableName: table.name, Key: spot.key, ConsistentRead: true }));
  // Released meanwhile: one more try.
  if (!found.Item) return takeFree();
  const seenOwner: unknown = found.Item.owner;
  const seenEpoch: unknown = found.Item.epoch;
  // A lease of the older kind that has not expired.
  if (typeof seenOwner !== 'string' || typeof seenEpoch !== 'string') return false;
  if (!(await isDead(table, seenOwner, seenEpoch))) return false;
  return put('#owner = :seenOwner AND epoch = :seenEpoch', {}, { ':seenOwner': seenOwner, ':seenEpoch': seenEpoch });
}

/** Gives a lease up so that another owner takes it at once; a lease not ours is left alone. */
export async function dropLease(table: Table, spot: LeaseSpot, owner: string): Promise<void> {
  try {
    await table.doc.send(
      new DeleteCommand({
        TableName: table.name,
        Key: spot.key,
        ConditionExpression: MINE,
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
}

/**
 * Gives a lease up while keeping its record: no owner, expired at once, naming its `heir` (who
 * should take it next). Anyone may take it from then on (acquireHeldLease); a lease not ours is left alone.
 */
export async function handLease(table: Table, spot: LeaseSpot, owner: string, heir: string, now: number): Promise<void> {
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: spot.key,
        UpdateExpression: 'SET #owner = :none, #until = :expired, heir = :heir, expiresAt = :ttl',
        ConditionExpression: MINE,
        ExpressionAttributeNames: names(spot),
        ExpressionAttributeValues: { ':owner': owner, ':none': '', ':expired': 0, ':heir': heir, ':ttl': ttlOf(now) },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
}
