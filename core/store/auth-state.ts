import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { authCredsKey, authPartition, authSignalKey } from '../keys.js';
import { batchGet, deletePartition } from './batch.js';
import { perTable, type Table } from './table.js';
import { writeInSharedRequests } from './table-writes.js';

/**
 * Baileys' authentication state of one `collectionName`: the creds item plus one item per
 * signal key (a single item would outgrow DynamoDB's 400 KB limit). Values are opaque strings:
 * the connector serializes with Baileys' BufferJSON so that this module never imports Baileys.
 * Read errors propagate: a swallowed read would make Baileys generate fresh keys and lose the
 * session.
 */
export interface SignalKeyWrite {
  type: string;
  id: string;
  /** null deletes the key. */
  value: string | null;
}

/**
 * Signal sessions are written on every message, and DynamoDB bills a write unit per KB: their
 * JSON (1-2 KB, base64 keys under repeated field names) deflates to about half, so most fit in
 * one unit instead of two (docs/benchmarks.md, Cost). Stored deflated as the binary attribute
 * `z` instead of `value`, once every live connector reads it (`signalKeyFormatOf`); read either way.
 */
const DEFLATED_TYPE = 'session';
/** Shorter values fit in one write unit as they are. */
const DEFLATE_FROM_CHARS = 700;

/** How this process writes signal keys to a table; set by what the live connectors can read. */
export const signalKeyFormatOf = perTable((): { deflateSessions: boolean } => ({ deflateSessions: false }));

function storedValue(item: Record<string, unknown> | undefined): string | undefined {
  const deflated = item?.z;
  if (deflated instanceof Uint8Array) return inflateRawSync(deflated).toString('utf8');
  const value = item?.value;
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new Error('Auth state item has a non-string value');
  return value;
}

export async function readCreds(table: Table, collectionName: string): Promise<string | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: authCredsKey(collectionName), ConsistentRead: true }));
  return storedValue(result.Item);
}

export async function writeCreds(table: Table, collectionName: string, value: string): Promise<void> {
  await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...authCredsKey(collectionName), value, updatedAt: Date.now() } }));
}

/** The stored keys of one type among `ids`, as id -> value; absent ids are missing from the result. */
export async function readSignalKeys(table: Table, collectionName: string, type: string, ids: string[]): Promise<Record<string, string>> {
  if (ids.length === 0) return {};
  const prefix = `KEY#${type}#`;
  const items = await batchGet(
    table,
    [...new Set(ids)].map((id) => authSignalKey(collectionName, type, id)),
  );
  const out: Record<string, string> = {};
  for (const item of items) {
    const value = storedValue(item);
    if (value !== undefined) out[String(item.sk).slice(prefix.length)] = value;
  }
  return out;
}

/** Puts and deletes signal keys in batches of 25 (unprocessed items retried). */
export async function writeSignalKeys(table: Table, collectionName: string, writes: SignalKeyWrite[]): Promise<void> {
  await writeSignalKeysOfCollections(table, [{ collectionName, writes }]);
}

/**
 * The writes of several collections in the same batch requests (the connector coalesces the
 * writes of its accounts). A key written more than once keeps its last value in `groups` order.
 */
export async function writeSignalKeysOfCollections(
  table: Table,
  groups: { collectionName: string; writes: SignalKeyWrite[] }[],
): Promise<void> {
  const { deflateSessions } = signalKeyFormatOf(table);
  await writeInSharedRequests(
    table,
    groups.flatMap(({ collectionName, writes }) =>
      writes.map((w) => {
        const key = authSignalKey(collectionName, w.type, w.id);
        if (w.value === null) return { delete: key };
        const deflate = deflateSessions && w.type === DEFLATED_TYPE && w.value.length >= DEFLATE_FROM_CHARS;
        return { put: deflate ? { ...key, z: deflateRawSync(w.value) } : { ...key, value: w.value } };
      }),
    ),
  );
}

/** Removes creds and every key of the collection (logout, account deletion). */
export async function clearAuthState(table: Table, collectionName: string): Promise<number> {
  return deletePartition(table, authPartition(collectionName));
}
