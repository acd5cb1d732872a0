import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { SHARDS_PARTITION, shardLeaseKey } from '../keys.js';
import { listHeartbeats, type Heartbeat } from './heartbeats.js';
import { acquireHeldLease, dropLease, handLease, type LeaseSpot } from './lease-writes.js';
import { queryPartition } from './paging.js';
import { withoutKeys, writeIfCondition, type Table } from './table.js';

/**
 * A lease per shard (docs/design.md, Scale-out), all in one partition, so that a connector reads
 * every one with one Query per round. Like an account lease it names its owner and the epoch of
 * the owner's heartbeat (heartbeats.ts), and is held by that heartbeat: never renewed itself.
 * `heir`: the connector a shard was handed to, until it takes the lease (`owner` is '' and
 * `until` 0 meanwhile). Leases of the older kind carry their own `until` and no epoch.
 * `running`: the shard's running accounts as its holder last counted them (its sessions), which
 * every connector balances by without reading the accounts; it stays through a hand-over and a
 * new holder's acquisition, and is absent where no holder has counted yet (or one from before
 * counts did not).
 */
const storedShardLeaseSchema = z.object({
  shard: z.number().int(),
  owner: z.string(),
  epoch: z.string().optional(),
  until: z.number().optional(),
  heir: z.string().optional(),
  running: z.number().int().nonnegative().optional(),
});

/** A shard lease as the planning sees it (connector/ownership/fair-share.ts): `until` is when it runs out. */
export interface ShardLease {
  shard: number;
  owner: string;
  /** Unix ms: the owner's heartbeat's `until` for a lease it holds; 0 when it holds none any more. */
  until: number;
  heir?: string;
  /** Running accounts as its holder last counted them; undefined: never counted. */
  running?: number;
}

/**
 * Every shard lease written so far (live or not), each with the moment it runs out: its owner's
 * heartbeat's (`heartbeats`, read here when not given), or its own for a lease of the older kind.
 */
export async function listShardLeases(table: Table, heartbeats?: ReadonlyMap<string, Heartbeat>): Promise<ShardLease[]> {
  const [items, beats] = await Promise.all([queryPartition(table, SHARDS_PARTITION), heartbeats ?? listHeartbeats(table)]);
  return items.map((item) => {
    const { epoch, until, ...lease } = storedShardLeaseSchema.parse(withoutKeys(item));
    if (epoch === undefined || lease.owner === '') return { ...lease, until: until ?? 0 };
    const heartbeat = beats.get(lease.owner);
    return { ...lease, until: heartbeat?.epoch === epoch ? heartbeat.until : 0 };
  });
}

const shardLease = (shard: number): LeaseSpot => ({ key: shardLeaseKey(shard), expiryAttribute: 'until' });

/**
 * Takes the shard for `epoch` of this connector's heartbeat: when its lease is absent, handed
 * over, expired or ours, or when its owner's heartbeat has expired (declared dead first). False
 * when a live connector holds it.
 */
export function acquireShard(
  table: Table,
  shard: number,
  owner: string,
  epoch: string,
  { now = Date.now(), running }: { now?: number; running?: number | undefined } = {},
): Promise<boolean> {
  // The count read with the lease goes on: the new holder counts its own once it has resumed them.
  return acquireHeldLease(table, shardLease(shard), running === undefined ? { shard } : { shard, running }, owner, epoch, now);
}

/** The holder's count of the shard's running accounts; a lease not ours is left alone. */
export async function recordShardRunning(table: Table, shard: number, owner: string, running: number): Promise<void> {
  await writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: shardLeaseKey(shard),
        UpdateExpression: 'SET running = :running',
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner, ':running': running },
      }),
    ),
  );
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
