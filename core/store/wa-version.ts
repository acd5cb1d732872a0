import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { WA_VERSION_KEY } from '../keys.js';
import { parseWaVersion, WA_VERSION_SOURCES, waVersionText, type WaVersion, type WaVersionSource } from '../wa-version.js';
import { withoutKeys, type Table } from './table.js';

/**
 * The WhatsApp Web version the connectors last resolved, one item for the deployment: a
 * connector that starts (or whose period comes round) within the refresh period of `resolvedAt`
 * uses it without fetching, and `GET /ping` reports it.
 */
export interface StoredWaVersion {
  version: WaVersion;
  source: WaVersionSource;
  /** Unix ms. */
  resolvedAt: number;
}

const storedSchema = z.object({ version: z.string(), source: z.enum(WA_VERSION_SOURCES), resolvedAt: z.number().int() });

/** The stored version, or undefined when none was stored yet (or the item is not one this code can read). */
export async function readWaVersion(table: Table): Promise<StoredWaVersion | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: WA_VERSION_KEY }));
  if (!result.Item) return undefined;
  const parsed = storedSchema.safeParse(withoutKeys(result.Item));
  const version = parsed.success ? parseWaVersion(parsed.data.version) : undefined;
  return parsed.success && version ? { ...parsed.data, version } : undefined;
}

export async function writeWaVersion(table: Table, stored: StoredWaVersion): Promise<void> {
  await table.doc.send(
    new PutCommand({
      TableName: table.name,
      Item: { ...WA_VERSION_KEY, version: waVersionText(stored.version), source: stored.source, resolvedAt: stored.resolvedAt },
    }),
  );
}
