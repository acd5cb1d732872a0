import { HTTPException } from 'hono/http-exception';
import { NotFoundError, OperationFailedError, ValidationError } from '../../core/errors.js';
import { newCommandId } from '../../core/ids.js';
import { isFinalGroupRequestStatus, type GroupOperation, type GroupRequest } from '../../core/schemas/group.js';
import type { SocketQuery } from '../../core/schemas/socket-query.js';
import { getAccount } from '../../core/store/accounts.js';
import { groupRequests } from '../../core/store/group-requests.js';
import { assertConnected } from '../messages/send-wait.js';
import { askConnector, type LiveRequestWait } from '../http/live-requests.js';
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

const GROUP_WAIT: LiveRequestWait<GroupRequest, { commandId: string }> = {
  records: groupRequests,
  isFinal: (request) => isFinalGroupRequestStatus(request.status),
  name: 'group request',
  notQueuedReason: 'the command could not be queued',
  notTakenReason: (config) => `no answer from the connector within ${config.SEND_TIMEOUT_MS} ms; not done`,
  unfinishedError: () => new OperationFailedError('the connector took the request but did not answer in time; it may have been done'),
};

/**
 * Asks the connector to run a group operation (`group`) or a socket query (`socket_query`) on the
 * account's live socket and waits (bounded) for WhatsApp's answer, the way a pairing-code request
 * does (accounts/pairing-code-wait.ts): a live request (http/live-requests.ts). At the deadline the
 * API fails the request if no connector took it (so none will); one taken in time gets
 * SEND_SETTLE_MS more.
 *
 * The account is looked up here, once the route has judged its params and body: on the groups
 * and contacts routes a bad request is 400 even for an unknown account (not knownAccount's order),
 * then an unknown account is 404 and one not connected 500.
 */
async function askSocket<T>(
  services: Services,
  accountId: string,
  asked: { type: 'group'; payload: GroupOperation } | { type: 'socket_query'; payload: SocketQuery },
): Promise<T> {
  const account = await getAccount(services.table, accountId);
  assertConnected(account);
  const answer = await askConnector(services, GROUP_WAIT, { ...asked, accountId, commandId: newCommandId() });
  if (answer.status === 'done') return (answer.answer ?? {}) as T;
  if (answer.status === 'refused') throw refusalError(answer);
  throw new OperationFailedError(answer.reason ?? 'group operation failed');
}

export const runGroupOperation = <T>(services: Services, accountId: string, operation: GroupOperation) =>
  askSocket<T>(services, accountId, { type: 'group', payload: operation });

/**
 * Sent as `socket_query` at once: connectors are deployed before the API (docs/design.md, rolling
 * deploys), and a connector from before `socket_query` would drop it as malformed.
 */
export const runSocketQuery = <T>(services: Services, accountId: string, query: SocketQuery) =>
  askSocket<T>(services, accountId, { type: 'socket_query', payload: query });
