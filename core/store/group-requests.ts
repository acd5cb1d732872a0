import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { groupRequestKey } from '../keys.js';
import { groupRequestSchema, type GroupRefusal, type GroupRequest, type GroupResult } from '../schemas/group.js';
import { claimPending, failPending, updateStatus } from './deadline-claim.js';
import { withoutKeys, type Table } from './table.js';

/**
 * One group operation's lifecycle, the pairing-code request's pattern (core/store/pairing-codes.ts):
 *
 *   pending ──claim (connector, only before the deadline)──► running ──► done | refused | failed
 *      └──failPending (API at its deadline; connector when it cannot run it)──► failed
 *
 * Both ways out of `pending` are conditional, so an operation the API gave up on is never run
 * (a group is never created after its request timed out), and one the connector took is
 * settled by the connector.
 */

/** Only needed while the API waits for it. */
const GROUP_REQUEST_TTL_SECONDS = 60 * 60;

export async function putPendingGroupRequest(
  table: Table,
  accountId: string,
  commandId: string,
  deadline: number,
  now = Date.now(),
): Promise<GroupRequest> {
  const request: GroupRequest = {
    commandId,
    status: 'pending',
    deadline,
    expiresAt: Math.floor(now / 1000) + GROUP_REQUEST_TTL_SECONDS,
  };
  await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...groupRequestKey(accountId, commandId), ...request } }));
  return request;
}

export async function findGroupRequest(table: Table, accountId: string, commandId: string): Promise<GroupRequest | undefined> {
  const result = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: groupRequestKey(accountId, commandId), ConsistentRead: true }),
  );
  return result.Item ? groupRequestSchema.parse(withoutKeys(result.Item)) : undefined;
}

/** Connector, right before asking WhatsApp: pending -> running, only before the deadline. */
export function claimGroupRequest(table: Table, accountId: string, commandId: string, now = Date.now()) {
  return claimPending(table, groupRequestKey(accountId, commandId), 'running', now);
}

/** pending -> failed: the API's deadline passed, or the connector cannot run it. False when no longer pending. */
export function failPendingGroupRequest(table: Table, accountId: string, commandId: string, reason: string) {
  return failPending(table, groupRequestKey(accountId, commandId), reason);
}

const settle = (table: Table, accountId: string, commandId: string, set: string, values: Record<string, unknown>) =>
  updateStatus(table, groupRequestKey(accountId, commandId), set, '#status = :running', { ':running': 'running', ...values });

/** Connector, after its claim: WhatsApp's answer, as the API gives it. */
export function markGroupRequestDone(table: Table, accountId: string, commandId: string, result: GroupResult) {
  return settle(table, accountId, commandId, '#status = :done, answer = :answer', { ':done': 'done', ':answer': result });
}

/** Connector, after its claim: WhatsApp refused (unknown group, not a member, not an admin). */
export function markGroupRequestRefused(table: Table, accountId: string, commandId: string, refusal: GroupRefusal, reason: string) {
  return settle(table, accountId, commandId, '#status = :refused, refusal = :refusal, reason = :reason', {
    ':refused': 'refused',
    ':refusal': refusal,
    ':reason': reason,
  });
}

/** Connector, after its claim: it could not be done. */
export function markGroupRequestFailed(table: Table, accountId: string, commandId: string, reason: string) {
  return settle(table, accountId, commandId, '#status = :failed, reason = :reason', { ':failed': 'failed', ':reason': reason });
}
