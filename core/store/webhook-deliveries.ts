import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { GSI1, keyText, type Gsi1Key, type Key } from '../keys.js';
import { batchGet } from './batch.js';
import type { Table } from './table.js';
import { tableWrites } from './table-writes.js';

/**
 * The deliveries log: one item per (webhook, event) pair, with where its delivery stands. It
 * serves GET /webhooks/:webhookId/deliveries (docs/webhooks.md) and lets a retry skip the pairs
 * already delivered. Kept 7 days (DynamoDB TTL on `expiresAt`).
 *
 * Keys (built here, not in keys.ts: the log belongs to no account partition and expires by TTL):
 *   pk     `WHLOG#<webhookId>`            one partition per webhook: its log is one Query
 *   sk     `<createdAt, 15 digits>#<eventId>`
 *   gsi1pk `WHLOG#<webhookId>#<status>`   pending and failed entries only (a sparse index)
 *   gsi1sk the sk
 * The sort key starts with the event's first queueing time (Unix ms, zero-padded so string
 * order is time order), so the log reads newest first with ScanIndexForward=false and no
 * filter. A filter on `pending` or `failed` reads only matching items (an index Query, not a scan
 * of 7 days dropped by a FilterExpression). Delivered entries, nearly all of them, have no index
 * copy: it cost a write unit per event and delivery (bench:cost, docs/benchmarks.md), and the
 * `delivered` filter reads the log itself with a FilterExpression that lets most items through. The time comes from the queued event, not from the attempt:
 * every attempt of a pair rewrites the same item, so a retry finds it by key (BatchGet) without
 * a read first. A replay is queued again with a new `createdAt`: its attempts are a new entry,
 * under the same eventId. Events queued before `createdAt` existed use their body's timestamp.
 *
 * Every write is a whole-item Put through BatchWriteItem, grouped across events (batcher.ts):
 * the hot path pays no awaited round trip per POST. A webhook's log lives in one partition,
 * so one webhook takes at most DynamoDB's per-partition write rate (1,000 items/s) in log writes.
 */
const LOG_PREFIX = 'WHLOG#';
const TIME_DIGITS = 15;
const RETENTION_SECONDS = 7 * 24 * 60 * 60;

const deliveryStatusSchema = z.enum(['pending', 'failed', 'delivered']);
export type DeliveryStatus = z.infer<typeof deliveryStatusSchema>;

/** One pair's entry as the API answers it. */
const deliverySchema = z.object({
  eventId: z.string(),
  event: z.string(),
  status: deliveryStatusSchema,
  attempts: z.number().int(),
  lastError: z.string().optional(),
  /** Unix ms. Entries written before it was a number held an ISO string (kept 7 days): read as ms. */
  lastAttemptAt: z.union([z.number(), z.string()]).transform((at) => (typeof at === 'number' ? at : Date.parse(at))),
});
export type Delivery = z.output<typeof deliverySchema>;

/** What locates a pair's entry: the webhook, the event's id and its first queueing time. */
export interface DeliveryPair {
  webhookId: string;
  eventId: string;
  createdAt: number;
}

const sortKey = (pair: DeliveryPair) => `${Math.max(0, Math.trunc(pair.createdAt)).toString().padStart(TIME_DIGITS, '0')}#${pair.eventId}`;
const logKey = (pair: DeliveryPair): Key => ({ pk: `${LOG_PREFIX}${pair.webhookId}`, sk: sortKey(pair) });
const logGsi1 = (pair: DeliveryPair, status: DeliveryStatus): Gsi1Key => ({
  gsi1pk: `${LOG_PREFIX}${pair.webhookId}#${status}`,
  gsi1sk: sortKey(pair),
});

/**
 * Writes log entries in the table's shared BatchWriteItem requests (table-writes.ts): an entry
 * waits for company, and leaves with whatever else is written meanwhile (other entries, the
 * write-ahead records of arriving messages).
 */
export interface DeliveryLogWriter {
  /**
   * Resolves once the entry is stored (await it when a read will depend on it). `inNoHurry`: no
   * retry will read the entry (its event is done), so it may wait up to a second for company;
   * the API's log shows it that much later. At a steady rate each entry was a request of its own.
   */
  record(pair: DeliveryPair, delivery: Delivery, options?: { inNoHurry?: boolean; now?: number }): Promise<void>;
  flush(): Promise<void>;
}

/** An entry a retry will read leaves within this. */
const LOG_LINGER_MS = 10;
const LOG_LINGER_IN_NO_HURRY_MS = 1_000;

export function createDeliveryLogWriter(table: Table): DeliveryLogWriter {
  const writes = tableWrites(table);
  return {
    record(pair, delivery, { inNoHurry = false, now = Date.now() } = {}) {
      const entry = {
        ...logKey(pair),
        ...(delivery.status === 'delivered' ? {} : logGsi1(pair, delivery.status)),
        ...delivery,
        expiresAt: Math.floor(now / 1000) + RETENTION_SECONDS,
      };
      return writes.add({ put: entry }, inNoHurry ? LOG_LINGER_IN_NO_HURRY_MS : LOG_LINGER_MS);
    },
    flush: () => writes.flush(),
  };
}

/** The stored entries of these pairs (one BatchGet), by `webhookId`; absent when never recorded. */
export async function findDeliveries(table: Table, pairs: DeliveryPair[]): Promise<Map<string, Delivery>> {
  const found = new Map<string, Delivery>();
  if (pairs.length === 0) return found;
  const bySortKey = new Map(pairs.map((pair) => [keyText(logKey(pair)), pair.webhookId]));
  for (const item of await batchGet(table, pairs.map(logKey))) {
    const webhookId = bySortKey.get(keyText(item));
    const parsed = deliverySchema.safeParse(item);
    if (webhookId !== undefined && parsed.success) found.set(webhookId, parsed.data);
  }
  return found;
}

/** A webhook's entries, newest first, optionally of one status only. */
export async function listDeliveries(
  table: Table,
  webhookId: string,
  options: { status?: DeliveryStatus | undefined; limit: number },
): Promise<Delivery[]> {
  const { status, limit } = options;
  const indexed = status === 'pending' || status === 'failed';
  const entries: Delivery[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.doc.send(
      new QueryCommand({
        TableName: table.name,
        ...(indexed ? { IndexName: GSI1 } : {}),
        KeyConditionExpression: indexed ? 'gsi1pk = :pk' : 'pk = :pk',
        ExpressionAttributeValues: {
          ':pk': indexed ? `${LOG_PREFIX}${webhookId}#${status}` : `${LOG_PREFIX}${webhookId}`,
          ...(status === 'delivered' ? { ':status': status } : {}),
        },
        ...(status === 'delivered' ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } } : {}),
        ScanIndexForward: false,
        Limit: limit - entries.length,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of result.Items ?? []) {
      const parsed = deliverySchema.safeParse(item);
      if (parsed.success) entries.push(parsed.data);
    }
    // Only the filtered read may need another page (its Limit counts the items read, not kept).
    startKey = status === 'delivered' ? result.LastEvaluatedKey : undefined;
  } while (startKey && entries.length < limit);
  return entries;
}
