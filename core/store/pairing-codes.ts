import { pairingCodeRequestKey } from '../keys.js';
import { pairingCodeRequestSchema, type PairingCodeRequest } from '../schemas/pairing-code.js';
import { commandRequestRecords } from './live-requests.js';
import type { Table } from './table.js';

/**
 * One pairing-code request's lifecycle, a live request (live-requests.ts) like a send:
 *
 *   pending ──claim (connector, only before the deadline)──► requesting ──► issued | already_connected | failed
 *      └──failPending (API at its deadline; connector when it cannot ask)──► failed
 *
 * Both ways out of `pending` are conditional, so a request the API gave up on is never asked
 * for, and one the connector took is finished by the connector.
 */
export const pairingCodeRequests = commandRequestRecords<PairingCodeRequest>(pairingCodeRequestKey, pairingCodeRequestSchema, 'requesting');

/** Connector, after its claim: the code WhatsApp gave, and until when it can be entered. */
export function markPairingCodeIssued(table: Table, accountId: string, commandId: string, code: string, codeExpiresAt: number) {
  return pairingCodeRequests.finishClaimed(table, accountId, commandId, 'issued', { code, codeExpiresAt });
}

/** Connector, after its claim: no code (`already_connected`: the account is linked). */
export function markPairingCodeRefused(
  table: Table,
  accountId: string,
  commandId: string,
  status: 'already_connected' | 'failed',
  reason: string,
) {
  return pairingCodeRequests.finishClaimed(table, accountId, commandId, status, { reason });
}
