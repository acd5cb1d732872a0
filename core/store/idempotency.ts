import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { idempotencyKey } from '../keys.js';
import { ITEM_ABSENT, withoutKeys, writeIfCondition, type Table } from './table.js';

/**
 * A client's Idempotency-Key on a send, mapped to the request it came with (a fingerprint) and
 * the message id of the one send made for it. The answer itself is not stored: the outbound
 * record of that message id holds the outcome, and the API rebuilds the same answer from it.
 * Items live in the account's partition (deleting the account removes them) and expire after a
 * day (`expiresAt`, the table's TTL attribute; an expired item still present counts as absent).
 */
const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

const idempotencyRecordSchema = z.object({
  /** Hash of the route and the request's fields (and file bytes) it was first used with. */
  fingerprint: z.string(),
  messageId: z.string(),
  /** Unix ms. */
  createdAt: z.number().int(),
  /** Epoch seconds. */
  expiresAt: z.number().int(),
});
export type IdempotencyRecord = z.infer<typeof idempotencyRecordSchema>;

const EXPIRED = 'expiresAt < :nowSeconds';

export async function findIdempotencyRecord(
  table: Table,
  accountId: string,
  key: string,
  now = Date.now(),
): Promise<IdempotencyRecord | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: idempotencyKey(accountId, key), ConsistentRead: true }));
  if (!result.Item) return undefined;
  const record = idempotencyRecordSchema.parse(withoutKeys(result.Item));
  return record.expiresAt < Math.floor(now / 1000) ? undefined : record;
}

/**
 * Takes the key for one request: true when this request is the first to use it (or the previous
 * use expired); false when another request holds it (read it with findIdempotencyRecord).
 */
export async function claimIdempotencyKey(
  table: Table,
  accountId: string,
  key: string,
  claim: { fingerprint: string; messageId: string },
  now = Date.now(),
): Promise<boolean> {
  const nowSeconds = Math.floor(now / 1000);
  const record: IdempotencyRecord = {
    ...claim,
    createdAt: now,
    expiresAt: nowSeconds + IDEMPOTENCY_TTL_SECONDS,
  };
  return writeIfCondition(
    table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...idempotencyKey(accountId, key), ...record },
        ConditionExpression: `${ITEM_ABSENT} OR ${EXPIRED}`,
        ExpressionAttributeValues: { ':nowSeconds': nowSeconds },
      }),
    ),
  );
}
