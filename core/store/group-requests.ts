import { groupRequestKey } from '../keys.js';
import { groupRequestSchema, type GroupRefusal, type GroupRequest, type GroupResult } from '../schemas/group.js';
import type { SocketQueryAnswer } from '../schemas/socket-query.js';
import { commandRequestRecords } from './live-requests.js';
import type { Table } from './table.js';

/**
 * The request records of group operations and socket queries (`GROUPREQ#`, both answered on the
 * live socket). One group operation's lifecycle, a live request (live-requests.ts) like a pairing-code request:
 *
 *   pending ──claim (connector, only before the deadline)──► running ──► done | refused | failed
 *      └──failPending (API at its deadline; connector when it cannot run it)──► failed
 *
 * Both ways out of `pending` are conditional, so an operation the API gave up on is never run
 * (a group is never created after its request timed out), and one the connector took is
 * finished by the connector.
 */
export const groupRequests = commandRequestRecords<GroupRequest>(groupRequestKey, groupRequestSchema, 'running');

/** Connector, after its claim: WhatsApp's answer, as the API gives it. */
export function markGroupRequestDone(table: Table, accountId: string, commandId: string, result: GroupResult | SocketQueryAnswer) {
  return groupRequests.finishClaimed(table, accountId, commandId, 'done', { answer: result });
}

/** Connector, after its claim: WhatsApp refused (unknown group, not a member, not an admin). */
export function markGroupRequestRefused(table: Table, accountId: string, commandId: string, refusal: GroupRefusal, reason: string) {
  return groupRequests.finishClaimed(table, accountId, commandId, 'refused', { refusal, reason });
}

/** Connector, after its claim: it could not be done. */
export function markGroupRequestFailed(table: Table, accountId: string, commandId: string, reason: string) {
  return groupRequests.finishClaimed(table, accountId, commandId, 'failed', { reason });
}
