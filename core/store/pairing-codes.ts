import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { pairingCodeRequestKey } from '../keys.js';
import { pairingCodeRequestSchema, type PairingCodeRequest } from '../schemas/pairing-code.js';
import { claimPending, failPending, updateStatus } from './deadline-claim.js';
import { withoutKeys, type Table } from './table.js';

/**
 * One pairing-code request's lifecycle, the send's pattern (core/store/outbound.ts) made small:
 *
 *   pending ──claim (connector, only before the deadline)──► requesting ──► issued | already_connected | failed
 *      └──failPending (API at its deadline; connector when it cannot ask)──► failed
 *
 * Both ways out of `pending` are conditional, so a request the API gave up on is never asked
 * for, and one the connector took is settled by the connector.
 */

/** Only needed while the API waits for it. */
const PAIRING_CODE_REQUEST_TTL_SECONDS = 60 * 60;

export async function putPendingPairingCodeRequest(
  table: Table,
  accountId: string,
  commandId: string,
  deadline: number,
  now = Date.now(),
): Promise<PairingCodeRequest> {
  const request: PairingCodeRequest = {
    commandId,
    status: 'pending',
    deadline,
    expiresAt: Math.floor(now / 1000) + PAIRING_CODE_REQUEST_TTL_SECONDS,
  };
  await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...pairingCodeRequestKey(accountId, commandId), ...request } }));
  return request;
}

export async function findPairingCodeRequest(table: Table, accountId: string, commandId: string): Promise<PairingCodeRequest | undefined> {
  const result = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: pairingCodeRequestKey(accountId, commandId), ConsistentRead: true }),
  );
  return result.Item ? pairingCodeRequestSchema.parse(withoutKeys(result.Item)) : undefined;
}

const update = (table: Table, accountId: string, commandId: string, set: string, condition: string, values: Record<string, unknown>) =>
  updateStatus(table, pairingCodeRequestKey(accountId, commandId), set, condition, values);

/** Connector, right before asking WhatsApp: pending -> requesting, only before the deadline. */
export function claimPairingCodeRequest(table: Table, accountId: string, commandId: string, now = Date.now()) {
  return claimPending(table, pairingCodeRequestKey(accountId, commandId), 'requesting', now);
}

/** pending -> failed: the API's deadline passed, or the connector cannot ask. False when no longer pending. */
export function failPendingPairingCodeRequest(table: Table, accountId: string, commandId: string, reason: string) {
  return failPending(table, pairingCodeRequestKey(accountId, commandId), reason);
}

/** Connector, after its claim: the code WhatsApp gave, and until when it can be entered. */
export function markPairingCodeIssued(table: Table, accountId: string, commandId: string, code: string, codeExpiresAt: number) {
  return update(table, accountId, commandId, '#status = :issued, code = :code, codeExpiresAt = :until', '#status = :requesting', {
    ':requesting': 'requesting',
    ':issued': 'issued',
    ':code': code,
    ':until': codeExpiresAt,
  });
}

/** Connector, after its claim: no code (`already_connected`: the account is linked). */
export function markPairingCodeRefused(
  table: Table,
  accountId: string,
  commandId: string,
  status: 'already_connected' | 'failed',
  reason: string,
) {
  return update(table, accountId, commandId, '#status = :status, reason = :reason', '#status = :requesting', {
    ':requesting': 'requesting',
    ':status': status,
    ':reason': reason,
  });
}
