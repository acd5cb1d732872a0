import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Key } from '../keys.js';
import { writeIfCondition, type Table } from './table.js';

/**
 * The two ways out of `pending` for a record the API waits on until its `deadline` (a live
 * request, live-requests.ts): the connector claims it, or the API fails it. Both are conditional on
 * `pending`, so exactly one wins; the claim also only before the deadline, so the connector never
 * acts on a record the API has already answered for.
 */

const IS_PENDING = '#status = :pending';
const NAMES = { '#status': 'status' };

/** A conditional status change: true when applied, false when its condition did not hold. */
export function updateStatus(
  table: Table,
  key: Key,
  set: string,
  condition: string,
  values: Record<string, unknown>,
  names: Record<string, string> = {},
): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: key,
        UpdateExpression: `SET ${set}`,
        ConditionExpression: condition,
        ExpressionAttributeNames: { ...NAMES, ...names },
        ExpressionAttributeValues: values,
      }),
    ),
  );
}

/** pending -> `claimed` before the deadline. `stampClaimedAt`: only a send's schema has `claimedAt`. */
export function claimPending(
  table: Table,
  key: Key,
  claimed: string,
  now: number,
  { stampClaimedAt = false }: { stampClaimedAt?: boolean } = {},
): Promise<boolean> {
  const set = `#status = :${claimed}${stampClaimedAt ? ', claimedAt = :now' : ''}`;
  return updateStatus(table, key, set, `${IS_PENDING} AND deadline > :now`, {
    ':pending': 'pending',
    [`:${claimed}`]: claimed,
    ':now': now,
  });
}

/**
 * pending -> failed with `reason` (and `fields`, e.g. a paused send's `retryAt`). False when it
 * is no longer pending (claimed or finished).
 */
export function failPending(table: Table, key: Key, reason: string, fields: Record<string, unknown> = {}): Promise<boolean> {
  const extra = Object.keys(fields).map((field) => `, #${field} = :${field}`);
  return updateStatus(
    table,
    key,
    `#status = :failed, reason = :reason${extra.join('')}`,
    IS_PENDING,
    {
      ':pending': 'pending',
      ':failed': 'failed',
      ':reason': reason,
      ...Object.fromEntries(Object.entries(fields).map(([field, value]) => [`:${field}`, value])),
    },
    Object.fromEntries(Object.keys(fields).map((field) => [`#${field}`, field])),
  );
}
