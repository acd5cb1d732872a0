import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { API_KEY_SK_PREFIX, accountPartition, apiKeyKey } from '../keys.js';
import { ITEM_EXISTS, withoutKeys, writeIfCondition, type Table } from './table.js';

/**
 * Per-account access keys. A key reads `wag_<accountId>_<keyId>_<secret>`: the account and key
 * id it names make its lookup one GetItem, and the 256-bit random secret makes a plain SHA-256
 * of the whole key a safe thing to store (a slow password hash only helps guessable secrets).
 * Only the hash is kept; the key itself is shown once, when created.
 */
const KEY_PATTERN = /^wag_([A-Za-z0-9]{1,64})_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;
const SECRET_BYTES = 32;

const apiKeySchema = z.object({
  keyId: z.string(),
  name: z.string().optional(),
  createdAt: z.string(),
  /** Unix milliseconds; refreshed at most once a minute (see functions/http/auth.ts). */
  lastUsedAt: z.number().int().optional(),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

const storedKeySchema = apiKeySchema.extend({ accountId: z.string(), secretHash: z.string() });

export const hashKey = (presented: string): Buffer => createHash('sha256').update(presented, 'utf8').digest();

/** Constant-time comparison of two SHA-256 digests. */
export const sameHash = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/** The account and key a presented key names, or undefined when it is not shaped like one. */
function parseAccountKey(presented: string): { accountId: string; keyId: string } | undefined {
  const match = KEY_PATTERN.exec(presented);
  return match ? { accountId: match[1]!, keyId: match[2]! } : undefined;
}

const toApiKey = (item: Record<string, unknown>): ApiKey => {
  const { accountId: _account, secretHash: _hash, ...key } = storedKeySchema.parse(withoutKeys(item));
  return key;
};

export async function createApiKey(
  table: Table,
  accountId: string,
  name: string | undefined,
  now = new Date(),
): Promise<{ key: ApiKey; secret: string }> {
  const keyId = randomBytes(8).toString('hex');
  const secret = `wag_${accountId}_${keyId}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
  const key: ApiKey = { keyId, ...(name !== undefined ? { name } : {}), createdAt: now.toISOString() };
  await table.doc.send(
    new PutCommand({
      TableName: table.name,
      Item: { ...apiKeyKey(accountId, keyId), ...key, accountId, secretHash: hashKey(secret).toString('base64') },
    }),
  );
  return { key, secret };
}

/** The account's keys, oldest first (key ids are random, so sorted by creation here). */
export async function listApiKeys(table: Table, accountId: string): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.doc.send(
      new QueryCommand({
        TableName: table.name,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': accountPartition(accountId), ':prefix': API_KEY_SK_PREFIX },
        ExclusiveStartKey: startKey,
      }),
    );
    keys.push(...(result.Items ?? []).map(toApiKey));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return keys.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** False when no such key exists. */
export function revokeApiKey(table: Table, accountId: string, keyId: string): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(new DeleteCommand({ TableName: table.name, Key: apiKeyKey(accountId, keyId), ConditionExpression: ITEM_EXISTS })),
  );
}

/** The stored key a presented account key proves, or undefined (unknown, revoked or wrong secret). */
export async function verifyAccountKey(table: Table, presented: string): Promise<(ApiKey & { accountId: string }) | undefined> {
  const named = parseAccountKey(presented);
  if (!named) return undefined;
  const result = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: apiKeyKey(named.accountId, named.keyId), ConsistentRead: true }),
  );
  if (!result.Item) return undefined;
  const stored = storedKeySchema.parse(withoutKeys(result.Item));
  if (stored.accountId !== named.accountId) return undefined;
  if (!sameHash(hashKey(presented), Buffer.from(stored.secretHash, 'base64'))) return undefined;
  return { ...toApiKey(result.Item), accountId: stored.accountId };
}

/** Records a use; never recreates a revoked key. */
export async function touchApiKey(table: Table, accountId: string, keyId: string, now = Date.now()): Promise<void> {
  await writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: apiKeyKey(accountId, keyId),
        UpdateExpression: 'SET lastUsedAt = :now',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':now': now },
      }),
    ),
  );
}
