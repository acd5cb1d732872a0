import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed } from '../errors.js';
import type { Key } from '../keys.js';
import { toAttributes } from './attributes.js';
import { writeIfCondition, type Table } from './table.js';

/**
 * The conditional writes behind every lease: an account's (leases.ts) and a shard's
 * (connectors.ts). A lease names its owner and expires unless renewed; `expiryAttribute` holds
 * that moment (Unix ms of the writer's clock), `expiresAt` (epoch seconds, the table's TTL) lets
 * DynamoDB remove leases nobody holds any more.
 */
export interface LeaseSpot {
  key: Key;
  expiryAttribute: string;
}

const TTL_GRACE_SECONDS = 24 * 60 * 60;
export const ttlOf = (until: number) => Math.floor(until / 1000) + TTL_GRACE_SECONDS;

const FREE_OR_MINE = 'attribute_not_exists(pk) OR #until < :now OR #owner = :owner';
const MINE = '#owner = :owner';
const names = (spot: LeaseSpot) => ({ '#owner': 'owner', '#until': spot.expiryAttribute });

/** Takes the lease when it is absent, expired or already ours; false when another owner holds it. */
export function takeLease(
  table: Table,
  spot: LeaseSpot,
  attributes: Record<string, unknown>,
  owner: string,
  ttlMs: number,
  now: number,
): Promise<boolean> {
  const until = now + ttlMs;
  return writeIfCondition(
    table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...spot.key, ...attributes, owner, [spot.expiryAttribute]: until, expiresAt: ttlOf(until) },
        ConditionExpression: FREE_OR_MINE,
        ExpressionAttributeNames: names(spot),
        ExpressionAttributeValues: { ':now': now, ':owner': owner },
      }),
    ),
  );
}

/**
 * Extends a lease we hold; false when it is no longer ours (the caller gives up what it covers at
 * once). Through the raw client: every account's and shard's lease is renewed every few seconds.
 */
export function extendLease(table: Table, spot: LeaseSpot, owner: string, ttlMs: number, now: number): Promise<boolean> {
  const until = now + ttlMs;
  return writeIfCondition(
    table.raw.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: toAttributes(spot.key),
        UpdateExpression: 'SET #until = :until, expiresAt = :ttl',
        ConditionExpression: MINE,
        ExpressionAttributeNames: names(spot),
        ExpressionAttributeValues: toAttributes({ ':owner': owner, ':until': until, ':ttl': ttlOf(until) }),
      }),
    ),
  );
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
 * should take it next). Anyone may take it from then on (takeLease); a lease not ours is left alone.
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
