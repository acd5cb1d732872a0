import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { CONNECTORS_PARTITION, connectorKey, SHARDS_PARTITION, shardLeaseKey } from '../keys.js';
import { queryPartition } from './paging.js';
import { dropLease, extendLease, handLease, takeLease, ttlOf, type LeaseSpot } from './lease-writes.js';
import { withoutKeys, type Table } from './table.js';

/**
 * Scale-out records (docs/design.md, Scale-out): a heartbeat per running connector and a lease
 * per shard. Both live in one partition each, so a connector reads all of them with one Query
 * per round. `until` is Unix milliseconds of the writer's clock; `expiresAt` (epoch seconds, the
 * table's TTL attribute) lets DynamoDB remove the records of connectors long gone.
 */
const heartbeatSchema = z.object({ connectorId: z.string(), until: z.number() });
type Heartbeat = z.infer<typeof heartbeatSchema>;

/** `heir`: the connector a shard was handed to, until it takes the lease (owner '' meanwhile). */
const shardLeaseSchema = z.object({ shard: z.number().int(), owner: z.string(), until: z.number(), heir: z.string().optional() });
export type ShardLease = z.infer<typeof shardLeaseSchema>;

/** Writes (or refreshes) this connector's heartbeat, live for `ttlMs`. */
export async function beat(table: Table, connectorId: string, ttlMs: number, now = Date.now()): Promise<void> {
  const until = now + ttlMs;
  await table.doc.send(
    new PutCommand({ TableName: table.name, Item: { ...connectorKey(connectorId), connectorId, until, expiresAt: ttlOf(until) } }),
  );
}

/** Removes the heartbeat on a clean stop, so the others rebalance at once. */
export async function removeHeartbeat(table: Table, connectorId: string): Promise<void> {
  await table.doc.send(new DeleteCommand({ TableName: table.name, Key: connectorKey(connectorId) }));
}

/** Ids of the connectors whose heartbeat is live, sorted. */
export async function liveConnectors(table: Table, now = Date.now()): Promise<string[]> {
  const items = await queryPartition(table, CONNECTORS_PARTITION);
  return items
    .map((item) => heartbeatSchema.parse(withoutKeys(item)))
    .filter((heartbeat: Heartbeat) => heartbeat.until >= now)
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
