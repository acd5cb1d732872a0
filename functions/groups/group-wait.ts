import { HTTPException } from 'hono/http-exception';
import { NotFoundError, OperationFailedError, ValidationError } from '../../core/errors.js';
import { newCommandId } from '../../core/ids.js';
import { isFinalGroupRequestStatus, type GroupOperation, type GroupRequest } from '../../core/schemas/group.js';
import { getAccount } from '../../core/store/accounts.js';
import { groupRequests } from '../../core/store/group-requests.js';
import { assertConnected } from '../messages/send-wait.js';
import type { Services } from '../http/services.js';

/** What the API answers when WhatsApp refused a group operation. */
function refusalError(request: GroupRequest): Error {
  switch (request.refusal) {
    case 'not_found':
      return new NotFoundError('Group not found');
    case 'not_member':
      return new HTTPException(403, { message: 'The account is not a member of this group' });
    case 'not_admin':
      return new HTTPException(403, { message: 'Only group admins can do this' });
    default:
      return new ValidationError(`WhatsApp refused the request: ${request.reason ?? 'bad request'}`);
  }
}

/**
 * Asks the connector to run a group operation on the account's live socket and waits (bounded)
 * for WhatsApp's answer, the way a pairing-code request does (accounts/pairing-code-wait.ts): a
 * `pending` record with a deadline, the command, then polling. At the deadline the API fails the
 * request if no connector took it (so none will); one taken in time gets SEND_SETTLE_MS more.
 *
 * The account is looked up here, once the route has judged its params and body: on the groups
 * and contacts routes a bad request is 400 even for an unknown account (not knownAccount's order),
 * then an unknown account is 404 and one not connected 500.
 */
export async function runGroupOperation<T>(services: Services, accountId: string, operation: GroupOperation): Promise<T> {
  const account = await getAccount(services.table, accountId);
  assertConnected(account);
  const { table, config, queues } = services;
  const commandId = newCommandId();
  const deadline = Date.now() + config.SEND_TIMEOUT_MS;
  await groupRequests.putPending(table, accountId, { commandId }, deadline);
  try {
    await queues.sendCommand({ type: 'group', accountId, commandId, payload: operation });
  } catch (error) {
    await groupRequests.failPending(table, accountId, commandId, 'the command could not be queued');
    throw error;
  }

  let answer = await pollUntilFinal(services, accountId, commandId, deadline);
  if (!answer) {
    const reason = `no answer from the connector within ${config.SEND_TIMEOUT_MS} ms; not done`;
    if (await groupRequests.failPending(table, accountId, commandId, reason)) throw new OperationFailedError(reason);
    answer = await pollUntilFinal(services, accountId, commandId, Math.max(deadline, Date.now()) + config.SEND_SETTLE_MS);
  }
  if (!answer) throw new OperationFailedError('the connector took the request but did not answer in time; it may have been done');
  if (answer.status === 'done') return (answer.answer ?? {}) as T;
  if (answer.status === 'refused') throw refusalError(answer);
  throw new OperationFailedError(answer.reason ?? 'group operation failed');
}

const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 250;

async function pollUntilFinal(services: Services, accountId: string, commandId: string, until: number): Promise<GroupRequest | undefined> {
  let interval = FIRST_POLL_MS;
  for (;;) {
    const request = await groupRequests.find(services.table, accountId, commandId);
    if (!request) throw new OperationFailedError('group request disappeared (account deleted?)');
    if (isFinalGroupRequestStatus(request.status)) return request;
    const remaining = until - Date.now();
    if (remaining <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(interval, remaining)));
    interval = Math.min(MAX_POLL_MS, interval * 2);
  }
}
