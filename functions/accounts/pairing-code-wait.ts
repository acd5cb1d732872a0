import { OperationFailedError, ValidationError } from '../../core/errors.js';
import { newCommandId } from '../../core/ids.js';
import { isFinalPairingCodeStatus, type PairingCodeRequest } from '../../core/schemas/pairing-code.js';
import { pairingCodeRequests } from '../../core/store/pairing-codes.js';
import type { Services } from '../http/services.js';

export const ALREADY_CONNECTED = 'Account is already connected';

/**
 * Asks the connector for a pairing code and waits (bounded) for its answer, the way a send
 * waits (functions/messages/send-wait.ts): a `pending` request record with a deadline, the command, then
 * polling. At the deadline the API fails the request if no connector took it (so none will);
 * one taken in time gets SEND_SETTLE_MS more to answer.
 */
export async function requestPairingCode(
  services: Services,
  accountId: string,
  phoneNumber: string,
): Promise<{ code: string; expiresAt: number }> {
  const { table, config, queues } = services;
  const commandId = newCommandId();
  const deadline = Date.now() + config.SEND_TIMEOUT_MS;
  await pairingCodeRequests.putPending(table, accountId, { commandId }, deadline);
  try {
    await queues.sendCommand({ type: 'request_pairing_code', accountId, commandId, payload: { phoneNumber } });
  } catch (error) {
    await pairingCodeRequests.failPending(table, accountId, commandId, 'the command could not be queued');
    throw error;
  }

  let answer = await pollUntilFinal(services, accountId, commandId, deadline);
  if (!answer) {
    const reason = `no answer from the connector within ${config.SEND_TIMEOUT_MS} ms`;
    if (await pairingCodeRequests.failPending(table, accountId, commandId, reason)) throw new OperationFailedError(reason);
    answer = await pollUntilFinal(services, accountId, commandId, Math.max(deadline, Date.now()) + config.SEND_SETTLE_MS);
  }
  if (!answer) throw new OperationFailedError('the connector took the request but did not answer in time');
  switch (answer.status) {
    case 'issued':
      if (answer.code && answer.codeExpiresAt !== undefined) return { code: answer.code, expiresAt: answer.codeExpiresAt };
      throw new OperationFailedError('the connector answered without a code');
    case 'already_connected':
      throw new ValidationError(ALREADY_CONNECTED);
    default:
      throw new OperationFailedError(answer.reason ?? 'no pairing code');
  }
}

const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 250;

async function pollUntilFinal(
  services: Services,
  accountId: string,
  commandId: string,
  until: number,
): Promise<PairingCodeRequest | undefined> {
  let interval = FIRST_POLL_MS;
  for (;;) {
    const request = await pairingCodeRequests.find(services.table, accountId, commandId);
    if (!request) throw new OperationFailedError('pairing-code request disappeared (account deleted?)');
    if (isFinalPairingCodeStatus(request.status)) return request;
    const remaining = until - Date.now();
    if (remaining <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(interval, remaining)));
    interval = Math.min(MAX_POLL_MS, interval * 2);
  }
}
