import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Key } from '../keys.js';
import type { Table } from './table.js';

/**
 * Which webhook URLs already received an event, so that a retry after one URL failed does not
 * POST again to the URLs that succeeded. One small item per event (a string set of URLs),
 * expiring with the dead-letter queue's retention.
 *
 * Item: pk `WHDELIVERY#<eventId>` sk `DELIVERY` -> {deliveredUrls: string set, expiresAt}.
 * (Key built here rather than in keys.ts: added by the connector engineer alongside the
 * delivery worker; it belongs to no account partition and is removed by TTL.)
 */
const webhookDeliveryKey = (eventId: string): Key => ({ pk: `WHDELIVERY#${eventId}`, sk: 'DELIVERY' });

/** Kept as long as an event can sit in the webhook DLQ (14 days) and be redriven. */
const DELIVERY_STATE_TTL_SECONDS = 14 * 24 * 60 * 60;

export async function findDeliveredUrls(table: Table, eventId: string): Promise<Set<string>> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: webhookDeliveryKey(eventId), ConsistentRead: true }));
  const urls: unknown = result.Item?.deliveredUrls;
  return urls instanceof Set ? new Set([...urls].filter((u): u is string => typeof u === 'string')) : new Set();
}

export async function recordDeliveredUrls(table: Table, eventId: string, urls: string[], now = Date.now()): Promise<void> {
  if (urls.length === 0) return;
  await table.doc.send(
    new UpdateCommand({
      TableName: table.name,
      Key: webhookDeliveryKey(eventId),
      UpdateExpression: 'ADD deliveredUrls :urls SET expiresAt = :expiresAt',
      ExpressionAttributeValues: {
        ':urls': new Set(urls),
        ':expiresAt': Math.floor(now / 1000) + DELIVERY_STATE_TTL_SECONDS,
      },
    }),
  );
}
