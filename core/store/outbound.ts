import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { outboundKey } from '../keys.js';
import { outboundSchema, type Outbound } from '../schemas/outbound.js';
import { ITEM_EXISTS, withoutKeys, writeIfCondition, type Table } from './table.js';

/** Outbound records are only needed while a send is in flight and shortly after. */
const OUTBOUND_TTL_SECONDS = 24 * 60 * 60;

/** Written by the function before the command is enqueued. */
export async function putPendingOutbound(
  table: Table,
  accountId: string,
  ids: { messageId: string; commandId: string },
  now = Date.now(),
): Promise<Outbound> {
  const outbound: Outbound = {
    messageId: ids.messageId,
    commandId: ids.commandId,
    status: 'pending',
    expiresAt: Math.floor(now / 1000) + OUTBOUND_TTL_SECONDS,
  };
  await table.doc.send(
    new PutCommand({ TableName: table.name, Item: { ...outboundKey(accountId, ids.messageId), ...outbound } }),
  );
  return outbound;
}

export async function findOutbound(
  table: Table,
  accountId: string,
  messageId: string,
  consistent = true,
): Promise<Outbound | undefined> {
  const result = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: outboundKey(accountId, messageId), ConsistentRead: consistent }),
  );
  return result.Item ? outboundSchema.parse(withoutKeys(result.Item)) : undefined;
}

async function settle(table: Table, accountId: string, messageId: string, values: Record<string, unknown>, set: string) {
  // False when the record expired or the account was deleted meanwhile: nobody waits for it any more.
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: outboundKey(accountId, messageId),
        UpdateExpression: `SET #status = :status, ${set}`,
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: values,
      }),
    ),
  );
}

/** Connector: the network accepted the message. False when no record exists. */
export function markOutboundSent(table: Table, accountId: string, messageId: string, sentAt = Date.now()) {
  return settle(table, accountId, messageId, { ':status': 'sent', ':sentAt': sentAt }, 'sentAt = :sentAt');
}

/** Connector: the send failed; `reason` is shown to the client as `detail`. */
export function markOutboundFailed(table: Table, accountId: string, messageId: string, reason: string) {
  return settle(table, accountId, messageId, { ':status': 'failed', ':reason': reason }, 'reason = :reason');
}

/**
 * The function gave up waiting: marks a still-pending send failed so that a connector picking
 * the command up late skips it. False when the connector settled it first (read it again).
 */
export async function expireOutbound(table: Table, accountId: string, messageId: string, reason: string): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: outboundKey(accountId, messageId),
        UpdateExpression: 'SET #status = :failed, reason = :reason',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':failed': 'failed', ':pending': 'pending', ':reason': reason },
      }),
    ),
  );
}
