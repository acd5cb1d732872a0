import { INBOX_SK_PREFIX, accountPartition, inboxKey, type Key } from '../keys.js';
import { inboxRecordSchema, type InboxRecord } from '../schemas/inbox.js';
import type { WriteRequest } from './batch.js';
import { queryPartitionPrefix } from './paging.js';
import type { Table } from './table.js';

/**
 * The inbound write-ahead records (connector/inbound/inbox.ts writes them through a group
 * commit). Writes are expressed as batch requests so that the writes of many accounts travel
 * together; reads are one Query over the account's `INBOX#` items.
 */
export const INBOX_TTL_SECONDS = 7 * 24 * 60 * 60;

const inboxRecordKey = (record: Pick<InboxRecord, 'accountId' | 'messageId' | 'part'>): Key =>
  inboxKey(record.accountId, record.messageId, record.part);

export function putInboxRequest(record: InboxRecord): WriteRequest {
  return { put: { ...inboxRecordKey(record), ...record } };
}

export function deleteInboxRequest(record: Pick<InboxRecord, 'accountId' | 'messageId' | 'part'>): WriteRequest {
  return { delete: inboxRecordKey(record) };
}

/** Every write-ahead record of the account (in key order, not arrival order). */
export async function listInboxRecords(table: Table, accountId: string): Promise<InboxRecord[]> {
  const items = await queryPartitionPrefix(table, accountPartition(accountId), INBOX_SK_PREFIX);
  return items.map((item) => inboxRecordSchema.parse(item));
}
