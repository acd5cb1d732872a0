import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { historyMediaKey, messageKey } from '../keys.js';
import type { WriteRequest } from './batch.js';
import { expiryAfter } from './retention.js';
import { ITEM_EXISTS, writeIfCondition, type Table } from './table.js';

/** Why the media of an imported message cannot be had: the API answers it as a 404. */
export const MEDIA_GONE = 'Media no longer available';

/**
 * The media of imported messages is not downloaded at import (docs/history.md): what finds it on
 * WhatsApp (the message's content, with its media key and path, as proto.Message bytes) is kept
 * beside the row, and the first download of the media fetches it.
 */
export function historyMediaPut(
  accountId: string,
  message: { messageId: string; timestamp: number },
  content: Uint8Array,
  messageDays: number | undefined,
): WriteRequest {
  // It expires with its message's row (retention.ts): without the row it finds nothing.
  const { messageId, timestamp } = message;
  return { put: { ...historyMediaKey(accountId, messageId), messageId, content, ...expiryAfter(timestamp, messageDays) } };
}

/** The kept content of a historical message with media; undefined when none is kept. */
export async function findHistoryMedia(table: Table, accountId: string, messageId: string): Promise<Uint8Array | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: historyMediaKey(accountId, messageId) }));
  const content: unknown = result.Item?.content;
  return content instanceof Uint8Array ? content : undefined;
}

/** The media of a historical message is stored now: its row gets the mediaId. False when the row is gone. */
export function setFetchedMedia(table: Table, accountId: string, messageId: string, mediaId: string): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: 'SET mediaId = :mediaId REMOVE mediaError',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':mediaId': mediaId },
      }),
    ),
  );
}
