import { createHash } from 'node:crypto';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { WEBHOOKS_PARTITION, webhookKey } from '../keys.js';
import { webhookRegistrationSchema, type WebhookRegistration } from '../schemas/webhook.js';
import { queryPartition } from './paging.js';
import { ITEM_ABSENT, withoutKeys, writeIfCondition, type Table } from './table.js';

/** Registers a URL; `created` is false when it was already registered. */
export async function registerWebhook(
  table: Table,
  url: string,
  now = new Date(),
): Promise<{ created: boolean; registration: WebhookRegistration }> {
  const registration: WebhookRegistration = { webhookId: webhookIdFor(url), url, events: ['message'], createdAt: now.toISOString() };
  const created = await writeIfCondition(
    table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...webhookKey(url), ...registration },
        ConditionExpression: ITEM_ABSENT,
      }),
    ),
  );
  return { created, registration };
}

/** Every registered webhook (registrations are global, not per account). */
export async function listWebhooks(table: Table): Promise<WebhookRegistration[]> {
  const items = await queryPartition(table, WEBHOOKS_PARTITION);
  return items.map((item) => {
    const stored = withoutKeys(item) as { url?: unknown; accountId?: unknown };
    const webhookId =
      typeof stored.url === 'string' ? webhookIdFor(stored.url, typeof stored.accountId === 'string' ? stored.accountId : undefined) : '';
    return webhookRegistrationSchema.parse({ webhookId, ...stored });
  });
}

export async function deleteWebhook(table: Table, url: string): Promise<void> {
  await table.doc.send(new DeleteCommand({ TableName: table.name, Key: webhookKey(url) }));
}

/** A registration's id: derived from its scope and URL, which identify it. */
function webhookIdFor(url: string, accountId?: string): string {
  return `wh_${createHash('sha256')
    .update(`${accountId ?? '*'}\n${url}`)
    .digest('base64url')
    .slice(0, 22)}`;
}
