import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { CONNECTORS_PARTITION, connectorKey } from '../keys.js';
import { toAttributes } from './attributes.js';
import { queryPartition } from './paging.js';
import { withoutKeys, writeIfCondition, type Table } from './table.js';

/**
 * A heartbeat per running connector (docs/design.md, Scale-out), all in one partition, so that a
 * connector reads every one with one Query per round. `until` is Unix milliseconds of the
 * writer's clock; `expiresAt` (epoch seconds, the table's TTL attribute) lets DynamoDB remove the
 * records of connectors long gone.
 *
 * A heartbeat is also what keeps a connector's account and shard leases (lease-writes.ts): each
 * names the heartbeat's `epoch`, a random value drawn at every registration. Once another connector has
 * declared a heartbeat dead (`declareDead`, only after it expired), its beats fail: the
 * connector then drops every account and registers again with a new epoch, so that no lease of
 * the old one can come back to life.
 */
const heartbeatSchema = z.object({
  connectorId: z.string(),
  epoch: z.string().optional(),
  until: z.number(),
  leaving: z.boolean().optional(),
  /** What this connector can read that older ones cannot (absent: a connector from before them). */
  reads: z.array(z.string()).optional(),
});
export type Heartbeat = z.infer<typeof heartbeatSchema>;

/**
 * Stored formats a connector reads, announced on its heartbeat: one is written only once every
 * live connector reads it, so that connectors of two versions can share accounts during a
 * rolling upgrade. `deflated-sessions`: Signal sessions stored deflated (auth-state.ts).
 */
export const STORED_FORMATS = ['deflated-sessions'] as const;
export type StoredFormat = (typeof STORED_FORMATS)[number];

/** True when every connector whose heartbeat is live (leaving ones too) reads `format`. */
export function everyLiveConnectorReads(heartbeats: ReadonlyMap<string, Heartbeat>, format: StoredFormat, now = Date.now()): boolean {
  const live = [...heartbeats.values()].filter((heartbeat) => heartbeat.until >= now);
  return live.length > 0 && live.every((heartbeat) => heartbeat.reads?.includes(format) === true);
}

const TTL_GRACE_SECONDS = 24 * 60 * 60;
/** The table's TTL attribute (epoch seconds) for a record live until `until`: a day of grace after. */
export const ttlOf = (until: number) => Math.floor(until / 1000) + TTL_GRACE_SECONDS;

/** Writes this connector's heartbeat afresh (a new epoch), live for `ttlMs`. */
export async function registerHeartbeat(
  table: Table,
  connectorId: string,
  epoch: string,
  ttlMs: number,
  now = Date.now(),
  abortSignal?: AbortSignal,
  reads: readonly StoredFormat[] = STORED_FORMATS,
): Promise<void> {
  const until = now + ttlMs;
  await table.doc.send(
    new PutCommand({
      TableName: table.name,
      Item: { ...connectorKey(connectorId), connectorId, epoch, until, reads: [...reads], expiresAt: ttlOf(until) },
    }),
    { abortSignal },
  );
}

/**
 * Extends this connector's heartbeat of `epoch` to `now + ttlMs`. False when it is gone: removed,
 * or declared dead by another connector (which may be taking its accounts over).
 */
export function beat(
  table: Table,
  connectorId: string,
  epoch: string,
  ttlMs: number,
  now = Date.now(),
  abortSignal?: AbortSignal,
): Promise<boolean> {
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
      { abortSignal },
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
export function liveConnectors(heartbeats: ReadonlyMap<string, Heartbeat>, now = Date.now()): string[] {
  return [...heartbeats.values()]
    .filter((heartbeat) => heartbeat.until >= now && !heartbeat.leaving)
    .map((heartbeat) => heartbeat.connectorId)
    .sort();
}
