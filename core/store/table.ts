import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsClients } from '../aws.js';
import type { Config } from '../config.js';
import { isConditionalCheckFailed } from '../errors.js';
import type { Retention } from './retention.js';

/** What every repository needs: the clients and the table name. */
export interface Table {
  doc: DynamoDBDocumentClient;
  /** The hot path's client: items in attribute form (attributes.ts), middleware built once. */
  raw: DynamoDBClient;
  name: string;
  /** How long messages, chats and media rows are kept (retention.ts); absent: forever. */
  retention?: Retention;
}

export function tableOf(
  config: Pick<Config, 'TABLE_NAME'> & Partial<Pick<Config, 'MESSAGE_RETENTION_DAYS' | 'MEDIA_RETENTION_DAYS'>>,
  clients: Pick<AwsClients, 'dynamo' | 'dynamoRaw'>,
): Table {
  const retention: Retention = { messageDays: config.MESSAGE_RETENTION_DAYS, mediaDays: config.MEDIA_RETENTION_DAYS };
  return { doc: clients.dynamo, raw: clients.dynamoRaw, name: config.TABLE_NAME, retention };
}

/**
 * Makes one `T` per table (client and name) on first use: the group commits that every account
 * of a process shares. Keyed by the raw client, through which those commits write.
 */
export function perTable<T>(make: (table: Table) => T): (table: Table) => T {
  const made = new WeakMap<Table['raw'], Map<string, T>>();
  return (table) => {
    let byName = made.get(table.raw);
    if (!byName) made.set(table.raw, (byName = new Map()));
    let value = byName.get(table.name);
    if (value === undefined) byName.set(table.name, (value = make(table)));
    return value;
  };
}

/** Condition fragments, named once. */
export const ITEM_EXISTS = 'attribute_exists(pk)';
export const ITEM_ABSENT = 'attribute_not_exists(pk)';

/** Removes the key attributes from a raw item before it is parsed as a domain record. */
export function withoutKeys(item: Record<string, unknown>): Record<string, unknown> {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ...rest } = item;
  return rest;
}

/**
 * Runs a conditional write: true when it was applied, false when its condition did not hold
 * (ConditionalCheckFailedException); any other error is thrown.
 */
export async function writeIfCondition(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}
