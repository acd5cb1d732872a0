import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { CONNECTORS_PARTITION, connectorKey, SHARDS_PARTITION, shardLeaseKey } from '../keys.js';
import { queryPartition } from './paging.js';
import { dropLease, extendLease, handLease, takeLease, ttlOf, type LeaseSpot } from './lease-writes.js';
import { toAttributes } from './attributes.js';
import { withoutKeys, writeIfCondition, type Table } from './table.js';

/**
 * Scale-out records (docs/design.md, Scale-out): a heartbeat per running connector and a lease
 * per shard. Both live in one partition each, so a connector reads all of them with one Query
 * per round. `until` is Unix milliseconds of the writer's clock; `expiresAt` (epoch seconds, the
 * table's TTL attribute) lets DynamoDB remove the records of connectors long gone.
 *
 * A heartbeat is also what keeps a connector's account leases (leases.ts): each names the
 * heartbeat's `epoch`, a random value drawn at every registration. Once another connector has
 * declared a heartbeat dead (`declareDead`, only after it expired), its beats fail: the
 * connector then drops every account and registers again with a new epoch, so that no lease of
 * the old one can come back to life.
 */
const heartbeatSchema = z.object({
  connectorId: z.string(),
  epoch: z.string().optional(),
  until: z.number(),
  leaving: z.boolean().optional(),
});
export type Heartbeat = z.infer<typeof heartbeatSchema>;

/** `heir`: the connector a shard was handed to, until it takes the lease (owner '' meanwhile). */
const shardLeaseSchema = z.object({ shard: z.number().int(), owner: z.string(), until: z.number(), heir: z.string().optional() });
export type ShardLease = z.infer<typeof shardLeaseSchema>;

/** Writes this connector's heartbeat afresh (a new epoch), live for `ttlMs`. */
export async function registerHeartbeat(table: Table, connectorId: string, epoch: string, ttlMs: number, now = Date.now()): Promise<void> {
  const until = now + ttlMs;
  await table.doc.send(
    new PutCommand({ TableName: table.name, Item: { ...connectorKey(connectorId), connectorId, epoch, until, expiresAt: ttlOf(until) } }),
  );
}

/**
 * Extends this connector's heartbeat of `epoch` to `now + ttlMs`. False when it is gone: removed,
 * or declared dead by another connector (which may be taking its accounts over).
 */
export function beat(table: Table, connectorId: string, epoch: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const until = now + ttlMs;
  return writeIfCondition(
    table.raw.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: toAttributes(connectorKey(connectorId)),
        UpdateExpression: 'SET #until = :until, expiresAt = :ttl',
        ConditionExpression: 'epoch = :epoch',
        ExpressionAttributeNames: { '#until': 'until' },
        ExpressionAttributeValues: toAttributes({ ':epoch': epoch, ':until': until, ':ttl': ttlOf(until) }),
      }),
    ),
  );
}

/**
 * A stop has begun: the others plan without this connector (they never hand it a shard), while
 * its heartbeat still holds its account leases until they are released one by one.
 */
export async function markLeaving(table: Table, connectorId: string, epoch: string): Promise<void> {
  await writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: connectorKey(connectorId),
        UpdateExpression: 'SET leaving = :yes',
        ConditionExpression: 'epoch = :epoch',
        ExpressionAttributeValues: { ':yes': true, ':epoch': epoch },
      }),
    ),
  );
}

/** Removes the heartbeat of `epoch` on a clean stop, once its account leases are released. */
export async function removeHeartbeat(table: Table, connectorId: string, epoch: string): Promise<void> {
  await writeIfCondition(
    table.doc.send(
      new DeleteCommand({
        TableName: table.name,
        Key: connectorKey(connectorId),
        ConditionExpression: 'epoch = :epoch',
        ExpressionAttributeValues: { ':epoch': epoch },
      }),
    ),
  );
}

/**
 * Makes sure the heartbeat of `epoch` can never be extended again, when it has expired: true
 * when it is dead (deleted now, or already gone or replaced by a later epoch), false when it is
 * still live. The delete and the owner's beats are ordered on one item, so either the beat
 * lands first (the heartbeat is live again and this fails) or this does (the beat fails).
 */
export async function declareDead(table: Table, connectorId: string, epoch: string, now = Date.now()): Promise<boolean> {
  const deleted = await writeIfCondition(
    table.doc.send(
      new DeleteCommand({
        TableName: table.name,
        Key: connectorKey(connectorId),
        ConditionExpression: 'epoch = :epoch AND #until < :now',
        ExpressionAttributeNames: { '#until': 'until' },
        ExpressionAttributeValues: { ':epoch': epoch, ':now': now },
      }),
    ),
  );
  if (deleted) return true;
  const found = await table.doc.send(new GetCommand({ TableName: table.name, Key: connectorKey(connectorId), ConsistentRead: true }));
  return !found.Item || heartbeatSchema.parse(withoutKeys(found.Item)).epoch !== epoch;
}

/** Every connector's heartbeat, live or expired, by connector id. */
export async function listHeartbeats(table: Table): Promise<Map<string, Heartbeat>> {
  const items = await queryPartition(table, CONNECTORS_PARTITION);
  const heartbeats = items.map((item) => heartbeatSchema.parse(withoutKeys(item)));
  return new Map(heartbeats.map((heartbeat) => [heartbeat.connectorId, heartbeat]));
}

/** Ids of the connectors whose heartbeat is live and not leaving, sorted: whom the shards are shared among. */
export async function liveConnectors(table: Table, now = Date.now()): Promise<string[]> {
  return [...(await listHeartbeats(table)).values()]
    .filter((heartbeat) => heartbeat.until >= now && !heartbeat.leaving)
    .map((heartbeat) => heartbeat.connectorId)
    .sort();
}

/** Every shard lease written so far (live or expired). */
export async function listShardLeases(table: Table): Promise<ShardLease[]> {
  const items = await queryPartition(table, SHARDS_PARTITION);
  return items.map((item) => shardLeaseSchema.parse(withoutKeys(item)));
}

const shardLease = (shard: number): LeaseSpot => ({ key: shardLeaseKey(shard), expiryAttribute: 'until' });

/** Takes the shard when its lease is absent, expired or ours; false when another connector holds it. */
export function acquireShard(table: Table, shard: number, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  return takeLease(table, shardLease(shard), { shard }, owner, ttlMs, now);
}

/** Extends a shard lease we hold; false when it is no longer ours (the caller gives the shard up at once). */
export function renewShard(table: Table, shard: number, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  return extendLease(table, shardLease(shard), owner, ttlMs, now);
}

/** Gives a shard up so that another connector takes it at once; a lease not ours is left alone. */
export function releaseShard(table: Table, shard: number, owner: string): Promise<void> {
  return dropLease(table, shardLease(shard), owner);
}

/**
 * Gives a shard up to a named heir: the lease is free at once (anyone may take it), and until
 * the heir does, every connector plans with the shard as the heir's. A lease not ours is left alone.
 */
export function handShard(table: Table, shard: number, owner: string, heir: string, now = Date.now()): Promise<void> {
  return handLease(table, shardLease(shard), owner, heir, now);
}
