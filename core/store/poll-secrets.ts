import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { pollSecretKey } from '../keys.js';
import type { Table } from './table.js';

/**
 * A poll's `messageSecret`: voters encrypt their votes with a key derived from it, so it is kept
 * (in the account's partition, deleted with it) for as long as votes may arrive. A separate item,
 * so that the message item, which the API reads and rewrites whole, never carries it.
 */
export async function putPollSecret(table: Table, accountId: string, messageId: string, secret: Uint8Array): Promise<void> {
  await table.doc.send(
    new PutCommand({ TableName: table.name, Item: { ...pollSecretKey(accountId, messageId), secret: Buffer.from(secret) } }),
  );
}

export async function findPollSecret(table: Table, accountId: string, messageId: string): Promise<Uint8Array | undefined> {
  const result = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: pollSecretKey(accountId, messageId), ConsistentRead: true }),
  );
  const secret: unknown = result.Item?.secret;
  return secret instanceof Uint8Array ? secret : undefined;
}
