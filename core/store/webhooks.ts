import { createHash } from 'node:crypto';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { WEBHOOKS_PARTITION, accountWebhooksPrefix, webhookKey } from '../keys.js';
import { webhookRegistrationSchema, type WebhookRegistration } from '../schemas/webhook.js';
import { batchWrite } from './batch.js';
import { queryPartition, queryPartitionPrefix } from './paging.js';
import { ITEM_EXISTS, withoutKeys, writeIfCondition, type Table } from './table.js';

/** What a registration request gives. `secret: null` removes the secret; omitted fields keep their value. */
export interface WebhookInput {
  url: string;
  /** Absent: global (every account's events). */
  accountId?: string | undefined;
  events?: WebhookRegistration['events'] | undefined;
  secret?: string | null | undefined;
}

const DEFAULT_EVENTS: WebhookRegistration['events'] = ['message'];

/**
 * Registers a webhook, identified by its URL and scope: `created` is false when that pair was
 * registered already, whose `events` and `secret` are then replaced by those given (an omitted
 * one keeps its value). One UpdateItem, so concurrent registrations of the same pair end as one
 * item; the answer is built from the item as it was, merged with what this request set. A bare
 * URL registers a global `message` webhook, as the spec's `POST /webhooks {url}` does.
 */
export async function registerWebhook(
  table: Table,
  input: WebhookInput | string,
  now = new Date(),
): Promise<{ created: boolean; registration: WebhookRegistration }> {
  const { url, accountId, events, secret } = typeof input === 'string' ? { url: input } : input;
  const webhookId = webhookIdFor(url, accountId);
  const sets = ['#webhookId = :webhookId', '#url = :url', '#createdAt = if_not_exists(#createdAt, :now)'];
  const names: Record<string, string> = { '#webhookId': 'webhookId', '#url': 'url', '#createdAt': 'createdAt', '#events': 'events' };
  const values: Record<string, unknown> = { ':webhookId': webhookId, ':url': url, ':now': now.toISOString() };
  if (accountId !== undefined) {
    sets.push('#accountId = :accountId');
    names['#accountId'] = 'accountId';
    values[':accountId'] = accountId;
  }
  if (events !== undefined) {
    sets.push('#events = :events');
    values[':events'] = events;
  } else {
    // Registrations stored before filters existed have none: they stay `message` webhooks.
    sets.push('#events = if_not_exists(#events, :defaultEvents)');
    values[':defaultEvents'] = DEFAULT_EVENTS;
  }
  let removes = '';
  if (secret !== undefined) {
    names['#secret'] = 'secret';
    if (secret === null) removes = ' REMOVE #secret';
    else {
      sets.push('#secret = :secret');
      values[':secret'] = secret;
    }
  }
  const result = await table.doc.send(
    new UpdateCommand({
      TableName: table.name,
      Key: webhookKey(url, accountId),
      UpdateExpression: `SET ${sets.join(', ')}${removes}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_OLD',
    }),
  );
  const old = result.Attributes ? parseRegistration(result.Attributes) : undefined;
  const keptSecret = secret === undefined ? old?.secret : (secret ?? undefined);
  const registration = webhookRegistrationSchema.parse({
    webhookId,
    url,
    ...(accountId !== undefined ? { accountId } : {}),
    events: events ?? old?.events ?? DEFAULT_EVENTS,
    ...(keptSecret !== undefined ? { secret: keptSecret } : {}),
    createdAt: old?.createdAt ?? now.toISOString(),
  });
  return { created: old === undefined, registration };
}

/** Every registered webhook, global and scoped (with their secrets: for delivery, never for an answer). */
export async function listWebhooks(table: Table, options: { consistent?: boolean } = {}): Promise<WebhookRegistration[]> {
  const items = await queryPartition(table, WEBHOOKS_PARTITION, undefined, options);
  return items.map(parseRegistration);
}

/** The webhooks scoped to one account (not the global ones, which also receive its events). */
export async function listAccountWebhooks(table: Table, accountId: string): Promise<WebhookRegistration[]> {
  const items = await queryPartitionPrefix(table, WEBHOOKS_PARTITION, accountWebhooksPrefix(accountId));
  return items.map(parseRegistration);
}

/**
 * A registration by id. The id is a digest of scope and URL, not a key: this reads the one
 * partition of registrations (a few items, the same Query the connector caches).
 */
export async function findWebhook(table: Table, webhookId: string): Promise<WebhookRegistration | undefined> {
  return (await listWebhooks(table)).find((registration) => registration.webhookId === webhookId);
}

/** Removes a registration; false when it was not there (deleted meanwhile). */
export async function deleteWebhook(table: Table, url: string, accountId?: string): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(new DeleteCommand({ TableName: table.name, Key: webhookKey(url, accountId), ConditionExpression: ITEM_EXISTS })),
  );
}

/** Removes every webhook scoped to an account (account deletion); answers how many there were. */
export async function deleteAccountWebhooks(table: Table, accountId: string): Promise<number> {
  const items = await queryPartitionPrefix(table, WEBHOOKS_PARTITION, accountWebhooksPrefix(accountId));
  await batchWrite(
    table,
    items.map((item) => ({ delete: { pk: String(item.pk), sk: String(item.sk) } })),
  );
  return items.length;
}

/** Items stored before ids and scopes existed have only `url` and `createdAt`: their id is derived here. */
function parseRegistration(item: Record<string, unknown>): WebhookRegistration {
  const stored = withoutKeys(item) as { url?: unknown; accountId?: unknown };
  const webhookId =
    typeof stored.url === 'string' ? webhookIdFor(stored.url, typeof stored.accountId === 'string' ? stored.accountId : undefined) : '';
  return webhookRegistrationSchema.parse({ webhookId, ...stored });
}

/** A registration's id: derived from its scope and URL, which identify it. */
function webhookIdFor(url: string, accountId?: string): string {
  return `wh_${createHash('sha256')
    .update(`${accountId ?? '*'}\n${url}`)
    .digest('base64url')
    .slice(0, 22)}`;
}
