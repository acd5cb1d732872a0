import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { qrKey } from '../keys.js';
import { withoutKeys, type Table } from './table.js';

/**
 * The QR an account's session currently shows, written by the connector when Baileys emits one
 * and read by `GET /accounts/:accountId/qr`. `validUntil` (Unix ms) is what the API reports as
 * `expiresAt`; `expiresAt` (epoch seconds) is the table's TTL attribute, which removes the item
 * eventually (TTL deletion lags, so reads check `validUntil` themselves).
 */
const storedQrSchema = z.object({ qr: z.string(), validUntil: z.number().int(), expiresAt: z.number().int() });

export interface PendingQr {
  qr: string;
  /** Unix milliseconds. */
  expiresAt: number;
}

export async function putQr(table: Table, accountId: string, qr: string, lifetimeMs: number, now = Date.now()): Promise<void> {
  const validUntil = now + lifetimeMs;
  await table.doc.send(
    new PutCommand({
      TableName: table.name,
      Item: { ...qrKey(accountId), qr, validUntil, expiresAt: Math.ceil(validUntil / 1000) },
    }),
  );
}

/** The QR still valid at `now`, or undefined. */
export async function findQr(table: Table, accountId: string, now = Date.now()): Promise<PendingQr | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: qrKey(accountId), ConsistentRead: true }));
  if (!result.Item) return undefined;
  const stored = storedQrSchema.parse(withoutKeys(result.Item));
  return stored.validUntil > now ? { qr: stored.qr, expiresAt: stored.validUntil } : undefined;
}

export async function clearQr(table: Table, accountId: string): Promise<void> {
  await table.doc.send(new DeleteCommand({ TableName: table.name, Key: qrKey(accountId) }));
}
