import { accountObjectPrefix, accountPartition, authPartition, leaseKey } from '../keys.js';
import { deletePrefix, type MediaStore } from '../media-store.js';
import { ensureCollectionClaims } from './accounts.js';
import { batchWrite, deletePartition } from './batch.js';
import { collectionHolder, releaseCollection } from './collection-claims.js';
import type { Table } from './table.js';
import { deleteAccountWebhooks } from './webhooks.js';

export interface DeletedCounts {
  items: number;
  authItems: number;
  objects: number;
}

/**
 * Removes everything an account owns: every item of its partition (account, chats, messages,
 * media records, outbound, inbound write-ahead records, Idempotency-Keys), its auth state, its lease, the webhooks scoped to it,
 * and every S3 object under its prefix.
 * Idempotent: the API runs it on DELETE and the connector runs it again after closing the
 * session, catching anything written in between.
 *
 * The auth state goes only while no other account holds `collectionName`: the first run
 * releases the claim, so the second finds it free (and clears what the closing session wrote)
 * unless another account has claimed the name meanwhile, whose session it then is.
 */
export async function deleteAccountData(
  table: Table,
  media: MediaStore,
  accountId: string,
  collectionName: string,
): Promise<DeletedCounts> {
  const items = (await deletePartition(table, accountPartition(accountId))) + (await deleteAccountWebhooks(table, accountId));
  await ensureCollectionClaims(table);
  const holder = await collectionHolder(table, collectionName);
  const ours = holder === undefined || holder === accountId;
  const authItems = ours ? await deletePartition(table, authPartition(collectionName)) : 0;
  await releaseCollection(table, collectionName, accountId);
  await batchWrite(table, [{ delete: leaseKey(accountId) }]);
  const objects = await deletePrefix(media, accountObjectPrefix(accountId));
  return { items, authItems, objects };
}
