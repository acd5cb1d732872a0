import { OUTBOX_SK_PREFIX, accountPartition, outboxKey } from '../keys.js';
import { outboxItemSchema, type OutboxItem } from '../schemas/event-outbox.js';
import type { WriteRequest } from './batch.js';
import { queryPartitionPrefix } from './paging.js';
import type { Table } from './table.js';

/**
 * The event outbox of an account: items written before a row change whose webhook event no
 * write-ahead record holds, overwritten by the next one once the event is enqueued, deleted
 * when the account leaves its connector (connector/inbound/event-outbox.ts sends them through
 * the shared batched writes). A resuming connector reads them with one Query
 * of the account's `OUTBOX#` items.
 */
export const OUTBOX_TTL_SECONDS = 7 * 24 * 60 * 60;

export function putOutboxRequest(item: OutboxItem): WriteRequest {
  return { put: { ...outboxKey(item.accountId, item.id), ...item } };
}

export function deleteOutboxRequest(accountId: string, id: string): WriteRequest {
  return { delete: outboxKey(accountId, id) };
}

/** Every outbox item of the account (in key order, which is not their age). */
export async function listOutboxItems(table: Table, accountId: string): Promise<OutboxItem[]> {
  const items = await queryPartitionPrefix(table, accountPartition(accountId), OUTBOX_SK_PREFIX);
  return items.map((item) => outboxItemSchema.parse(item));
}
