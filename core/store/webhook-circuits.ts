import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { WEBHOOK_CIRCUITS_PK, webhookCircuitKey } from '../keys.js';
import { queryPartition } from './paging.js';
import { ITEM_ABSENT, writeIfCondition, type Table } from './table.js';

/**
 * The open webhook circuits shared by every connector (connector/webhooks/shared-circuits.ts):
 * an item exists only while its target's circuit is open, so a closed circuit costs nothing.
 *
 *   open:        put if absent (the first connector to open it sets the probe schedule)
 *   claimProbe:  conditional update: the probe is due and nobody holds it (one prober at a time)
 *   probeFailed: the next probe time, by the prober only; its claim is dropped
 *   close:       delete (the probe, or any POST, answered 2xx)
 *
 * A claim lasts `probeUntil`: a prober that died holding it is replaced after that.
 */
const sharedCircuitSchema = z.object({
  target: z.string(),
  failedProbes: z.number().int(),
  nextProbeAt: z.number(),
  openedAt: z.number(),
  probeUntil: z.number().optional(),
});
export type SharedCircuit = z.infer<typeof sharedCircuitSchema>;

/** A day: an item nobody probes any more (its webhook deleted) goes by DynamoDB TTL. */
const CIRCUIT_TTL_SECONDS = 24 * 60 * 60;

const keyOf = (target: string) => webhookCircuitKey(createHash('sha256').update(target).digest('hex'));
const expiresAt = (now: number) => Math.floor(now / 1000) + CIRCUIT_TTL_SECONDS;

/** Opens the target's circuit unless it is open: answers the circuit as stored (ours, or the one found). */
export async function openCircuit(table: Table, target: string, nextProbeAt: number, now = Date.now()): Promise<SharedCircuit> {
  const circuit: SharedCircuit = { target, failedProbes: 0, nextProbeAt, openedAt: now };
  const created = await writeIfCondition(
    table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...keyOf(target), ...circuit, expiresAt: expiresAt(now) },
        ConditionExpression: ITEM_ABSENT,
      }),
    ),
  );
  if (created) return circuit;
  const found = await table.doc.send(new GetCommand({ TableName: table.name, Key: keyOf(target), ConsistentRead: true }));
  // Closed again between the two requests: ours is as good as any.
  return found.Item ? sharedCircuitSchema.parse(found.Item) : openCircuit(table, target, nextProbeAt, now);
}

/** Takes the probe of an open circuit whose probe is due; false when it is not due, taken, or closed. */
export async function claimProbe(table: Table, target: string, owner: string, until: number, now = Date.now()): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: keyOf(target),
        UpdateExpression: 'SET probeOwner = :owner, probeUntil = :until',
        ConditionExpression: 'attribute_exists(pk) AND nextProbeAt <= :now AND (attribute_not_exists(probeUntil) OR probeUntil < :now)',
        ExpressionAttributeValues: { ':owner': owner, ':until': until, ':now': now },
      }),
    ),
  );
}

/** The claimed probe failed: the next one is due at `nextProbeAt`. Nothing when the claim was lost. */
export async function probeFailed(
  table: Table,
  target: string,
  owner: string,
  failedProbes: number,
  nextProbeAt: number,
  now = Date.now(),
): Promise<void> {
  await writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: keyOf(target),
        UpdateExpression: 'SET failedProbes = :failed, nextProbeAt = :next, expiresAt = :expires REMOVE probeOwner, probeUntil',
        ConditionExpression: 'probeOwner = :owner',
        ExpressionAttributeValues: { ':owner': owner, ':failed': failedProbes, ':next': nextProbeAt, ':expires': expiresAt(now) },
      }),
    ),
  );
}

export async function closeCircuit(table: Table, target: string): Promise<void> {
  await table.doc.send(new DeleteCommand({ TableName: table.name, Key: keyOf(target) }));
}

/** Every open circuit (strongly consistent: a circuit just opened must not read as closed). */
export async function listOpenCircuits(table: Table): Promise<SharedCircuit[]> {
  const items = await queryPartition(table, WEBHOOK_CIRCUITS_PK, undefined, { consistent: true });
  return items.map((item) => sharedCircuitSchema.parse(item));
}
