import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { accountGsi1, accountKey } from '../../core/keys.js';
import type { AccountStatus } from '../../core/schemas/account.js';
import type { Table } from '../../core/store/table.js';

/**
 * An account item as versions before collection claims wrote it: no claim beside it, so it
 * can name any collection (another account's included).
 */
export async function putLegacyAccount(
  table: Table,
  account: { id: string; collectionName: string; createdAt?: string; status?: AccountStatus },
): Promise<void> {
  const createdAt = account.createdAt ?? new Date().toISOString();
  const status = account.status ?? 'not_started';
  await table.doc.send(
    new PutCommand({
      TableName: table.name,
      Item: {
        ...accountKey(account.id),
        ...accountGsi1(account.id, createdAt),
        _id: account.id,
        collectionName: account.collectionName,
        status,
        currentStatus: status,
        hasQR: false,
        createdAt,
        lastUpdate: createdAt,
      },
    }),
  );
}
