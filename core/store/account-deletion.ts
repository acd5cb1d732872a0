import { accountObjectPrefix, accountPartition, authPartition, leaseKey } from '../keys.js';
import { deletePrefix, type MediaStore } from '../media-store.js';
import { batchWrite, deletePartition } from './batch.js';
import type { Table } from './table.js';

export interface DeletedCounts {
  items: number;
  authItems: number;
  objects: number;
}

/**
 * Removes everything an account owns: every item of its partition (account, chats, messages,
 * media records, outbound, inbound write-ahead records, Idempotency-Keys), its auth state, its lease, and every S3 object under its prefix.
 * Idempotent: the API runs it on DELETE and the connector runs it again after closing the
 * session, catching anything written in between.
 */
export async function deleteAccountData(
  table: Table,
  media: MediaStore,
  accountId: string,
  collectionName: string,
): Promise<DeletedCounts> {
  const items = await deletePartition(table, accountPartition(accountId));
  const authItems = await deletePartition(table, authPartition(collectionName));
  await batchWrite(table, [{ delete: leaseKey(accountId) }]);
  const objects = await deletePrefix(media, accountObjectPrefix(accountId));
  return { items, authItems, objects };
}
