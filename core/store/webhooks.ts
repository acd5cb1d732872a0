import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed } from '../errors.js';
import { WEBHOOKS_PARTITION, webhookKey } from '../keys.js';
import { webhookRegistrationSchema, type WebhookRegistration } from '../schemas/webhook.js';
import { ITEM_ABSENT, withoutKeys, type Table } from './table.js';

/** Registers a URL; `created` is false when it was already registered. */
export async function registerWebhook(
  table: Table,
  url: string,
  now = new Date(),
): Promise<{ created: boolean; registration: WebhookRegistration }> {
  const registration: WebhookRegistration = { url, createdAt: now.toISOString() };
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...webhookKey(url), ...registration },
        ConditionExpression: ITEM_ABSENT,
      }),
    );
    return { created: true, registration };
  } catch (error) {
    if (isConditionalCheckFailed(error)) return { created: false, registration };
    throw error;
  }
}

/** Every registered webhook (registrations are global, not per account). */
export async function listWebhooks(table: Table): Promise<WebhookRegistration[]> {
  const registrations: WebhookRegistration[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.doc.send(
      new QueryCommand({
        TableName: table.name,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': WEBHOOKS_PARTITION },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) registrations.push(webhookRegistrationSchema.parse(withoutKeys(item)));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return registrations;
}

export async function deleteWebhook(table: Table, url: string): Promise<void> {
  await table.doc.send(new DeleteCommand({ TableName: table.name, Key: webhookKey(url) }));
}
