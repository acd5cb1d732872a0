import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ValidationError } from '../errors.js';
import { GSI1 } from '../keys.js';
import { notExpiredFilter } from './retention.js';
import type { Table } from './table.js';

export interface Page {
  limit: number;
  skip: number;
}

/** Every item: no limit, nothing skipped. */
export const ALL: Page = { limit: Number.POSITIVE_INFINITY, skip: 0 };

/**
 * One `gsi1` partition in sort-key order, `skip` items dropped and `limit` kept. DynamoDB has no
 * offset, so the skipped items are read and discarded: skip is bounded by the API.
 */
export async function queryGsi1(
  table: Table,
  gsi1pk: string,
  page: Page,
  order: 'newest_first' | 'oldest_first',
  kept?: KeptRows,
): Promise<Record<string, unknown>[]> {
  const wanted = page.skip + page.limit;
  const { items } = await queryPages(table, kept ? keptGsi1Query(gsi1pk, order, kept) : gsi1Query(gsi1pk, order), wanted);
  return items.slice(page.skip, wanted);
}

/**
 * A list of rows that expire (retention.ts): `from`, the lowest `gsi1sk` still kept (absent:
 * every row is kept by time), and the filter that leaves out rows whose own TTL has passed.
 * Still one Query: the bound stops it where the expired rows begin instead of reading them.
 */
export interface KeptRows {
  from?: string | undefined;
}

const gsi1Query = (gsi1pk: string, order: 'newest_first' | 'oldest_first') => ({
  IndexName: GSI1,
  KeyConditionExpression: 'gsi1pk = :pk',
  ExpressionAttributeValues: { ':pk': gsi1pk },
  ScanIndexForward: order === 'oldest_first',
});

function keptGsi1Query(gsi1pk: string, order: 'newest_first' | 'oldest_first', kept: KeptRows) {
  const filter = notExpiredFilter();
  return {
    IndexName: GSI1,
    KeyConditionExpression: kept.from === undefined ? 'gsi1pk = :pk' : 'gsi1pk = :pk AND gsi1sk >= :from',
    FilterExpression: filter.FilterExpression,
    ExpressionAttributeValues: {
      ':pk': gsi1pk,
      ...(kept.from === undefined ? {} : { ':from': kept.from }),
      ...filter.ExpressionAttributeValues,
    },
    ScanIndexForward: order === 'oldest_first',
  };
}

/**
 * One page of a `gsi1` partition after `cursor` (absent: from the start): at most `limit` items,
 * and the cursor of the next page when there may be one. A cursor is the Query's last key as
 * opaque text (base64url JSON); one that is not such a key of this partition is refused.
 */
export async function gsi1CursorPage(
  table: Table,
  gsi1pk: string,
  page: { limit: number; cursor?: string | undefined },
  order: 'newest_first' | 'oldest_first',
): Promise<{ items: Record<string, unknown>[]; nextCursor?: string }> {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, gsi1pk);
  const { items, lastKey } = await queryPages(table, gsi1Query(gsi1pk, order), page.limit, after);
  return lastKey ? { items, nextCursor: Buffer.from(JSON.stringify(lastKey)).toString('base64url') } : { items };
}

/** The message of a cursor that no page gave out (core/errors.ts ValidationError's text). */
const INVALID_CURSOR = 'cursor is not valid';

const CURSOR_KEY_FIELDS = ['pk', 'sk', 'gsi1pk', 'gsi1sk'] as const;

function decodeCursor(cursor: string, gsi1pk: string): Record<string, string> {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new ValidationError(INVALID_CURSOR);
  }
  const fields = key as Record<string, unknown> | null;
  const valid =
    typeof fields === 'object' &&
    fields !== null &&
    Object.keys(fields).length === CURSOR_KEY_FIELDS.length &&
    CURSOR_KEY_FIELDS.every((name) => typeof fields[name] === 'string' && (fields[name] as string).length <= 1024) &&
    fields.gsi1pk === gsi1pk;
  if (!valid) throw new ValidationError(INVALID_CURSOR);
  return fields as Record<string, string>;
}

/** Every item of one table partition (all pages), optionally projected, optionally a strongly consistent read. */
export async function queryPartition(
  table: Table,
  pk: string,
  projection?: string,
  options: { consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  return queryPartitionItems(table, pk, { projection, ...options });
}

/** Every item of one table partition whose sort key starts with `skPrefix` (all pages). */
export async function queryPartitionPrefix(
  table: Table,
  pk: string,
  skPrefix: string,
  options: { consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  return queryPartitionItems(table, pk, { skPrefix, ...options });
}

async function queryPartitionItems(
  table: Table,
  pk: string,
  options: { projection?: string | undefined; skPrefix?: string; consistent?: boolean },
): Promise<Record<string, unknown>[]> {
  const { projection, skPrefix, consistent } = options;
  const { items } = await queryPages(table, {
    KeyConditionExpression: skPrefix === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ...(skPrefix === undefined ? {} : { ':prefix': skPrefix }) },
    ...(projection ? { ProjectionExpression: projection } : {}),
    ...(consistent ? { ConsistentRead: true } : {}),
  });
  return items;
}

/**
 * Runs a Query page after page, from after `after` (absent: the start), until `wanted` items are
 * read or the results end; `lastKey` is where a next page would start (absent: at the end).
 */
async function queryPages(
  table: Table,
  input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
  wanted = Number.POSITIVE_INFINITY,
  after?: Record<string, unknown>,
): Promise<{ items: Record<string, unknown>[]; lastKey?: Record<string, unknown> }> {
  const items: Record<string, unknown>[] = [];
  let startKey = after;
  do {
    const result = await table.doc.send(
      new QueryCommand({
        ...input,
        TableName: table.name,
        ...(Number.isFinite(wanted) ? { Limit: wanted - items.length } : {}),
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey && items.length < wanted);
  return startKey ? { items, lastKey: startKey } : { items };
}

/**
 * The items of one `gsi1` partition whose sort key is in the range (`from` and `to` included;
 * an absent bound is open), oldest first, one DynamoDB page of at most `pageSize` at a time: a
 * caller holds one page in memory however long the range is.
 */
export async function* gsi1RangePages(
  table: Table,
  gsi1pk: string,
  range: { from?: string; to?: string },
  pageSize: number,
  options: { skipExpired?: boolean } = {},
): AsyncGenerator<Record<string, unknown>[]> {
  const filter = options.skipExpired ? notExpiredFilter() : undefined;
  const { from, to } = range;
  const condition =
    from !== undefined && to !== undefined
      ? ' AND gsi1sk BETWEEN :from AND :to'
      : from !== undefined
        ? ' AND gsi1sk >= :from'
        : to !== undefined
          ? ' AND gsi1sk <= :to'
          : '';
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.doc.send(
      new QueryCommand({
        TableName: table.name,
        IndexName: GSI1,
        KeyConditionExpression: `gsi1pk = :pk${condition}`,
        ExpressionAttributeValues: {
          ':pk': gsi1pk,
          ...(from !== undefined ? { ':from': from } : {}),
          ...(to !== undefined ? { ':to': to } : {}),
          ...filter?.ExpressionAttributeValues,
        },
        ...(filter ? { FilterExpression: filter.FilterExpression } : {}),
        ScanIndexForward: true,
        Limit: pageSize,
        ExclusiveStartKey: startKey,
      }),
    );
    if (result.Items && result.Items.length > 0) yield result.Items;
    startKey = result.LastEvaluatedKey;
  } while (startKey);
}
