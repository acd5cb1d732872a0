import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mediaKey } from '../keys.js';
import { mediaSchema, type Media } from '../schemas/media.js';
import { expiryAfter, isExpired } from './retention.js';
import { withoutKeys, type Table } from './table.js';

export async function putMedia(table: Table, accountId: string, media: Media): Promise<void> {
  await table.doc.send(
    new PutCommand({
      TableName: table.name,
      Item: { ...mediaKey(accountId, media.mediaId), ...expiryAfter(Date.now(), table.retention?.mediaDays), ...media },
    }),
  );
}

export async function findMedia(table: Table, accountId: string, mediaId: string): Promise<Media | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: mediaKey(accountId, mediaId) }));
  return result.Item && !isExpired(result.Item) ? mediaSchema.parse(withoutKeys(result.Item)) : undefined;
}
