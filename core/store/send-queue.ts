import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { accountPartition, PACE_SK_PREFIX, paceKey, QUEUED_SEND_SK_PREFIX, queuedSendKey } from '../keys.js';
import type { SendCounts } from '../pacing/limits.js';
import { queuedSendSchema, type QueuedSend } from '../schemas/command.js';
import { queryPartitionPrefix } from './paging.js';
import { ITEM_EXISTS, withoutKeys, writeIfCondition, type Table } from './table.js';

/**
 * A paced account's queue and counts (docs/sending.md#paced-sends), in its partition:
 *
 * - `PACE`: the send counts (core/pacing/limits.ts), written by the connector that runs the
 *   account after each send (it is their one writer while it holds the account's lease), and
 *   two counters: `enqueued`, the last ticket the API handed out (ADD, so API instances never
 *   share one), and `dequeued`, how many queued sends have left the queue. Their difference is
 *   how many wait, which the API checks against `queueLimit` without reading the queue.
 * - `PACE#Q#<ticket>`: a queued send (its command, deadline, `notBefore`), until it has gone,
 *   failed or been cancelled. Whoever deletes it (the connector after the send, the API on a
 *   cancel, each by a conditional delete, so only one of them) counts it `dequeued`.
 *
 * Exactly once comes from the send's outbound record, not from these items: the connector
 * claims it (pending -> sending) before WhatsApp is asked, a cancel fails it (pending -> failed),
 * and only one of those conditional writes wins (core/store/outbound.ts).
 */

const pairs = z.array(z.tuple([z.number(), z.number()]));
const paceStateSchema = z.object({
  enqueued: z.number().int().default(0),
  dequeued: z.number().int().default(0),
  recent: z.array(z.number()).default([]),
  minutes: pairs.default([]),
  newChats: pairs.default([]),
  lastSentAt: z.number().optional(),
});
export type PaceState = z.infer<typeof paceStateSchema>;

/** Queued sends of the account now (an API that took a ticket and died before its item counts until a connector corrects it). */
export const waiting = (state: PaceState): number => Math.max(0, state.enqueued - state.dequeued);

export const countsOf = (state: PaceState): SendCounts => ({
  recent: state.recent,
  minutes: state.minutes,
  newChats: state.newChats,
  ...(state.lastSentAt !== undefined ? { lastSentAt: state.lastSentAt } : {}),
});

const parseState = (item: Record<string, unknown> | undefined): PaceState => paceStateSchema.parse(item ? withoutKeys(item) : {});

/** The account's counts and counters (strongly consistent: the API judges a send by them). */
export async function readPaceState(table: Table, accountId: string): Promise<PaceState> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: paceKey(accountId), ConsistentRead: true }));
  return parseState(result.Item);
}

/**
 * The next ticket (the queued send's place), unless `maxTicket` would be passed (the queue is
 * full): undefined then.
 */
export async function takeTicket(table: Table, accountId: string, maxTicket: number): Promise<number | undefined> {
  try {
    const result = await table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: paceKey(accountId),
        UpdateExpression: 'ADD enqueued :one',
        ConditionExpression: 'attribute_not_exists(enqueued) OR enqueued < :max',
        ExpressionAttributeValues: { ':one': 1, ':max': maxTicket },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(result.Attributes?.enqueued);
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

export async function putQueuedSend(table: Table, accountId: string, item: QueuedSend): Promise<void> {
  await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...queuedSendKey(accountId, item.ticket), ...item } }));
}

/** The account's state and queued sends, in send order: one Query (a connector taking the account). */
export async function loadSendQueue(table: Table, accountId: string): Promise<{ state: PaceState; sends: QueuedSend[] }> {
  const items = await queryPartitionPrefix(table, accountPartition(accountId), PACE_SK_PREFIX, { consistent: true });
  const stateItem = items.find((item) => item.sk === PACE_SK_PREFIX);
  const sends = items
    .filter((item) => String(item.sk).startsWith(QUEUED_SEND_SK_PREFIX))
    .map((item) => queuedSendSchema.parse(withoutKeys(item)));
  return { state: parseState(stateItem), sends };
}

/** The queued sends only (GET /accounts/:accountId/outbox), in send order. */
export async function listQueuedSends(table: Table, accountId: string): Promise<QueuedSend[]> {
  return (await loadSendQueue(table, accountId)).sends;
}

/**
 * Deletes the queued send and counts it `dequeued`, unless someone else deleted it first (then
 * false, and that one counted it). `counts`: the connector's counts after a send, written with it.
 */
export async function removeQueuedSend(table: Table, accountId: string, ticket: number, counts?: SendCounts): Promise<boolean> {
  const removed = await writeIfCondition(
    table.doc.send(new DeleteCommand({ TableName: table.name, Key: queuedSendKey(accountId, ticket), ConditionExpression: ITEM_EXISTS })),
  );
  if (removed || counts) await updatePaceState(table, accountId, { dequeue: removed, ...(counts ? { counts } : {}) });
  return removed;
}

/** The connector's counts (after a send), and one more `dequeued` when `dequeue`. */
async function updatePaceState(table: Table, accountId: string, change: { dequeue: boolean; counts?: SendCounts }): Promise<void> {
  const sets: string[] = [];
  const values: Record<string, unknown> = {};
  const { counts } = change;
  if (counts) {
    sets.push('recent = :recent', 'minutes = :minutes', 'newChats = :newChats');
    Object.assign(values, { ':recent': counts.recent, ':minutes': counts.minutes, ':newChats': counts.newChats });
    if (counts.lastSentAt !== undefined) {
      sets.push('lastSentAt = :lastSentAt');
      values[':lastSentAt'] = counts.lastSentAt;
    }
  }
  if (change.dequeue) values[':one'] = 1;
  const expression = [sets.length ? `SET ${sets.join(', ')}` : '', change.dequeue ? 'ADD dequeued :one' : ''].filter(Boolean).join(' ');
  await table.doc.send(
    new UpdateCommand({ TableName: table.name, Key: paceKey(accountId), UpdateExpression: expression, ExpressionAttributeValues: values }),
  );
}

/**
 * Sets `dequeued` so that `enqueued - dequeued` is the number of queued sends found (`waiting`),
 * when no ticket was taken since `enqueued` was read: a ticket whose API died before writing its
 * send would otherwise hold a place in the queue for good. A connector does it when it takes the
 * account; false when a ticket came meanwhile (the next taking corrects it).
 */
export function correctWaiting(table: Table, accountId: string, enqueued: number, found: number): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: paceKey(accountId),
        UpdateExpression: 'SET dequeued = :dequeued',
        ConditionExpression: 'enqueued = :enqueued',
        ExpressionAttributeValues: { ':dequeued': enqueued - found, ':enqueued': enqueued },
      }),
    ),
  );
}
