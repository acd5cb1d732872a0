import {
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  BatchWriteItemCommand,
  type KeysAndAttributes,
  type WriteRequest as RawWriteRequest,
} from '@aws-sdk/client-dynamodb';
import { keyText, type Key } from '../keys.js';
import { fromAttributes, toAttributes } from './attributes.js';
import { queryPartition } from './paging.js';
import type { Table } from './table.js';

/** DynamoDB's own per-request limits. */
const BATCH_GET_LIMIT = 100;
export const BATCH_WRITE_LIMIT = 25;
/** BatchWriteItem requests of one `batchWrite` call out at once. */
const WRITE_REQUESTS_IN_FLIGHT = 4;
const MAX_ATTEMPTS = 8;

export type WriteRequest = { put: Record<string, unknown> } | { delete: Key };

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt) * (0.5 + Math.random())));

/**
 * Gets many items by key (strongly consistent), retrying what DynamoDB leaves unprocessed.
 * Missing items are absent. `projection` names the attributes to read (all by default).
 * Through the raw client: the inbound path reads signal keys and new rows' keys this way.
 */
export async function batchGet(table: Table, keys: Key[], projection?: string): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (const chunk of chunks(keys, BATCH_GET_LIMIT)) {
    let pending: KeysAndAttributes['Keys'] = chunk.map((k) => toAttributes({ pk: k.pk, sk: k.sk }));
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchGet left ${pending.length} keys unprocessed`);
      if (attempt > 0) await backoff(attempt);
      const request: KeysAndAttributes = {
        Keys: pending,
        ConsistentRead: true,
        ...(projection ? { ProjectionExpression: projection } : {}),
      };
      const result: BatchGetItemCommandOutput = await table.raw.send(new BatchGetItemCommand({ RequestItems: { [table.name]: request } }));
      for (const item of result.Responses?.[table.name] ?? []) found.push(fromAttributes(item));
      pending = result.UnprocessedKeys?.[table.name]?.Keys;
    }
  }
  return found;
}

/** The writes of `requests` with one per key: the last given for it. */
export function lastWriteOfEachKey(requests: WriteRequest[]): WriteRequest[] {
  const byKey = new Map<string, WriteRequest>();
  for (const request of requests) byKey.set(keyText('put' in request ? request.put : request.delete), request);
  return byKey.size === requests.length ? requests : [...byKey.values()];
}

/**
 * Puts and deletes many items, 25 per request, retrying unprocessed ones (through the raw
 * client: write-ahead records, signal keys, new rows and the delivery log go this way). A key
 * given more than once keeps its last write: only that one is sent.
 */
export async function batchWrite(table: Table, requests: WriteRequest[]): Promise<void> {
  const all: RawWriteRequest[] = lastWriteOfEachKey(requests).map((r) =>
    'put' in r
      ? { PutRequest: { Item: toAttributes(r.put) } }
      : { DeleteRequest: { Key: toAttributes({ pk: r.delete.pk, sk: r.delete.sk }) } },
  );
  const writeChunk = async (chunk: RawWriteRequest[]) => {
    let pending = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchWrite left ${pending.length} requests unprocessed`);
      if (attempt > 0) await backoff(attempt);
      const result = await table.raw.send(new BatchWriteItemCommand({ RequestItems: { [table.name]: pending } }));
      pending = result.UnprocessedItems?.[table.name] ?? [];
    }
  };
  // Every key is in one request only (deduplicated above), so the requests may go together: one
  // after another, the 812 pre-keys of each account linked were 33 round trips in a row.
  const queue = chunks(all, BATCH_WRITE_LIMIT);
  const worker = async () => {
    for (let chunk = queue.shift(); chunk; chunk = queue.shift()) await writeChunk(chunk);
  };
  await Promise.all(Array.from({ length: Math.min(WRITE_REQUESTS_IN_FLIGHT, queue.length) }, worker));
}

/** Keys of every item in one partition (all pages), for deletion. */
export async function partitionKeys(table: Table, pk: string): Promise<Key[]> {
  const items = await queryPartition(table, pk, 'pk, sk');
  return items.map((item) => ({ pk: String(item.pk), sk: String(item.sk) }));
}

export async function deletePartition(table: Table, pk: string): Promise<number> {
  const keys = await partitionKeys(table, pk);
  await batchWrite(
    table,
    keys.map((key) => ({ delete: key })),
  );
  return keys.length;
}
