import { OperationFailedError, ValidationError } from '../../core/errors.js';
import { newCommandId } from '../../core/ids.js';
import { isFinalPairingCodeStatus, type PairingCodeRequest } from '../../core/schemas/pairing-code.js';
import { pairingCodeRequests } from '../../core/store/pairing-codes.js';
import { askConnector, type LiveRequestWait } from '../http/live-requests.js';
import type { Services } from '../http/services.js';

export const ALREADY_CONNECTED = 'Account is already connected';

const PAIRING_CODE_WAIT: LiveRequestWait<PairingCodeRequest, { commandId: string }> = {
  records: pairingCodeRequests,
  isFinal: (request) => isFinalPairingCodeStatus(request.status),
  name: 'pairing-code request',
  notQueuedReason: 'the command could not be queued',
  notTakenReason: (config) => `no answer from the connector within ${config.SEND_TIMEOUT_MS} ms`,
  unfinishedError: () => new OperationFailedError('the connector took the request but did not answer in time'),
};

/**
 * Asks the connector for a pairing code and waits (bounded) for its answer, the way a send
 * waits (functions/messages/send-wait.ts): a live request (http/live-requests.ts). At the
 * deadline the API fails the request if no connector took it (so none will); one taken in time
 * gets SEND_SETTLE_MS more to answer.
 */
export async function requestPairingCode(
  services: Services,
  accountId: string,
  phoneNumber: string,
): Promise<{ code: string; expiresAt: number }> {
  const command = { type: 'request_pairing_code', accountId, commandId: newCommandId(), payload: { phoneNumber } } as const;
  const answer = await askConnector(services, PAIRING_CODE_WAIT, command);
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
