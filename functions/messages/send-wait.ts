import {
  AccountNotConnectedError,
  ConflictError,
  OperationFailedError,
  SendOutcomeUnknownError,
  SendPausedError,
  SendTimeoutError,
} from '../../core/errors.js';
import { activePause, isMessageSend, pausedDetail } from '../../core/send-pause.js';
import { newCommandId, newMessageId } from '../../core/ids.js';
import type { Account } from '../../core/schemas/account.js';
import type { CommandOf, PacedSendCommand, SendCommand } from '../../core/schemas/command.js';
import { isFinalStatus, type Outbound } from '../../core/schemas/outbound.js';
import { claimIdempotencyKey, findIdempotencyRecord, type IdempotencyRecord } from '../../core/store/idempotency.js';
import { failPendingOutbound, findOutbound, outboundRecords, putPendingOutbound } from '../../core/store/outbound.js';
import { IDEMPOTENCY_CONFLICT_ERROR, type IdempotentRequest } from './idempotency.js';
import { awaitFinished, queueOrFail, type LiveRequestWait } from '../http/live-requests.js';
import { isPaced, queuePacedSend } from './paced-sends.js';
import type { Services } from '../http/services.js';

/** A send as a live request (http/live-requests.ts): what the API says when it stops waiting. */
const SEND_WAIT: LiveRequestWait<Outbound, SendIds> = {
  records: outboundRecords,
  isFinal: (outbound) => isFinalStatus(outbound.status),
  name: 'send record',
  notQueuedReason: 'not sent: the command could not be queued',
  notTakenReason: (config, clientLeft) =>
    clientLeft
      ? 'the client disconnected before the connector took the message; not sent'
      : `no answer from the connector within ${config.SEND_TIMEOUT_MS} ms; not sent`,
  notTakenError: (reason) => new SendTimeoutError(reason),
  unfinishedError: (config) =>
    new SendOutcomeUnknownError(
      `the connector took the message but reported no outcome within ${config.SEND_SETTLE_MS} ms after the deadline; it may have been delivered`,
    ),
};

interface SendIds {
  messageId: string;
  commandId: string;
}

type SendType = SendCommand['type'];

/** What a route sends: a send command's type and its payload, without the ids sendAndWait assigns. */
export type SendRequest = {
  [T in SendType]: { type: T; payload: Omit<CommandOf<T>['payload'], 'messageId'> };
}[SendType];

export interface SendOptions {
  /** The request's signal: a client gone before the connector took the send fails it at once. */
  signal?: AbortSignal;
  /** From the Idempotency-Key header. */
  idempotency?: IdempotentRequest;
  /** `Prefer: respond-async`: a paced send is answered once queued (docs/sending.md#paced-sends). */
  async?: boolean;
  /** Told when the answer is "queued" (202) rather than the send's outcome. */
  onQueued?: (queued: { messageId: string; notBefore: number }) => void;
}

/**
 * Fails at once, without enqueuing, when the account cannot send. `reconnecting` can: its socket
 * is expected back within seconds (a dropped connection, or a hand-over between connectors), so
 * the send is queued and goes out once it is, or fails at the send's deadline.
 */
export function assertConnected(account: Account): void {
  if (account.currentStatus !== 'connected' && account.currentStatus !== 'reconnecting') {
    throw new AccountNotConnectedError(`account ${account._id} is ${account.currentStatus}, not connected`);
  }
}

/**
 * Refuses at once, without enqueuing, a message send while the account's sending is paused after
 * WhatsApp refused one (core/send-pause.ts). The API reads the account row for every send anyway
 * (knownAccount), so this check costs no request; the row is read eventually consistent, so a
 * send right after the nack may pass here, and the connector, which holds the pause in memory
 * for the accounts it runs, refuses it there (connector/commands/send-pauses.ts).
 */
function assertNotPaused(account: Account, commandType: SendType): void {
  const pause = activePause(account.sendPause);
  if (pause && isMessageSend(commandType)) throw new SendPausedError(pausedDetail(pause.reason), pause.until);
}

/**
 * What a send route checks before its upload: connected, and its sending not paused (an async
 * send of a paced account is queued during a pause instead: docs/sending.md#paced-sends).
 */
export function assertCanSend(services: Services, account: Account, options: Pick<SendOptions, 'async'>): void {
  assertConnected(account);
  if (!(options.async && isPaced(services, account, 'send_media'))) assertNotPaused(account, 'send_media');
}

/**
 * The one send path shared by every send route. Answers the message id once the connector
 * records `sent`; throws OperationFailedError (500 `internal_error`, the reason as `detail`)
 * otherwise. The send happens within this call's deadline or never:
 *
 *   API:       outbound=pending(deadline) ─► enqueue ─► poll ··· deadline: pending -> failed ─┐
 *   connector:              receive ─► claim pending -> sending (before the deadline) ─► send ─► sent
 *
 * Both transitions out of `pending` are conditional writes, so exactly one wins: either the API
 * failed it (500, and the connector will not send it however late the command arrives), or the
 * connector took it and the API waits SEND_SETTLE_MS more for the outcome.
 *
 * With an Idempotency-Key, the key is taken (conditional write) after the pending record exists
 * and before the command is queued: a second request with the key queues nothing and answers
 * from the first one's record, waiting for it when it is still in flight.
 */
export async function sendAndWait(services: Services, account: Account, request: SendRequest, options: SendOptions = {}): Promise<string> {
  const { table, config } = services;
  const { idempotency } = options;
  if (idempotency) {
    const earlier = await findIdempotencyRecord(table, account._id, idempotency.key);
    // Before the connection check: a replay answers what the first request got, whatever now.
    if (earlier) return answerLikeEarlier(services, account._id, idempotency, earlier, options);
  }
  assertConnected(account);
  if (isPaced(services, account, request.type)) return sendPaced(services, account, request, options);
  // Like the connection check: refused before the key is bound, so the key can be used again.
  assertNotPaused(account, request.type);

  const ids: SendIds = { messageId: newMessageId(), commandId: newCommandId() };
  const deadline = Date.now() + config.SEND_TIMEOUT_MS;
  await putPendingOutbound(table, account._id, ids, deadline);
  if (idempotency) {
    const claim = { fingerprint: idempotency.fingerprint, messageId: ids.messageId };
    if (!(await claimIdempotencyKey(table, account._id, idempotency.key, claim))) {
      // Another request took the key since we looked; ours was never queued.
      await failPendingOutbound(table, account._id, ids.messageId, 'not sent: an earlier request had the same Idempotency-Key');
      const earlier = await findIdempotencyRecord(table, account._id, idempotency.key);
      if (!earlier) throw new OperationFailedError('Idempotency-Key record disappeared (account deleted?)');
      return answerLikeEarlier(services, account._id, idempotency, earlier, options);
    }
  }
  await queueOrFail(services, SEND_WAIT, ids.messageId, commandOf(account._id, ids, request));
  await waitForOutcome(services, account._id, ids.messageId, deadline, options.signal);
  return ids.messageId;
}

function commandOf(accountId: string, ids: SendIds, request: SendRequest): SendCommand {
  const { type, payload } = request;
  // Each member of SendRequest is its command minus the ids, so adding them gives that command
  // back; TypeScript cannot follow the type/payload pairing through the spread.
  return { type, accountId, commandId: ids.commandId, payload: { ...payload, messageId: ids.messageId } } as SendCommand;
}

/**
 * A paced send (paced-sends.ts): queued, then answered at once when async (202 `queued`), or
 * awaited like any send within its deadline. A plain send of a paused account is refused at once;
 * an async one waits in the queue for the pause to end.
 */
async function sendPaced(services: Services, account: Account, request: SendRequest, options: SendOptions): Promise<string> {
  const { table } = services;
  const async = options.async === true;
  if (!async) assertNotPaused(account, request.type);
  const ids: SendIds = { messageId: newMessageId(), commandId: newCommandId() };
  // isPaced said it is a message send, and every message send is a PacedSendCommand.
  const send = commandOf(account._id, ids, request) as PacedSendCommand;
  const { idempotency } = options;
  const claimKey = idempotency
    ? () => claimIdempotencyKey(table, account._id, idempotency.key, { fingerprint: idempotency.fingerprint, messageId: ids.messageId })
    : undefined;
  const queued = await queuePacedSend(services, account, { send, async, ...(claimKey ? { claimKey } : {}) });
  if (!queued) {
    await failPendingOutbound(table, account._id, ids.messageId, 'not sent: an earlier request had the same Idempotency-Key');
    const earlier = idempotency && (await findIdempotencyRecord(table, account._id, idempotency.key));
    if (!idempotency || !earlier) throw new OperationFailedError('Idempotency-Key record disappeared (account deleted?)');
    return answerLikeEarlier(services, account._id, idempotency, earlier, options);
  }
  await queueOrFail(services, SEND_WAIT, ids.messageId, {
    type: 'send_queued',
    accountId: account._id,
    commandId: newCommandId(),
    payload: queued,
  });
  if (async) {
    options.onQueued?.({ messageId: ids.messageId, notBefore: queued.notBefore });
    return ids.messageId;
  }
  await waitForOutcome(services, account._id, ids.messageId, queued.deadline, options.signal);
  return ids.messageId;
}

/** The answer of the request that first used the key (waiting for it while it is in flight). */
async function answerLikeEarlier(
  services: Services,
  accountId: string,
  request: IdempotentRequest,
  earlier: IdempotencyRecord,
  options: SendOptions = {},
): Promise<string> {
  if (earlier.fingerprint !== request.fingerprint) throw new ConflictError(IDEMPOTENCY_CONFLICT_ERROR);
  const outbound = await findOutbound(services.table, accountId, earlier.messageId);
  if (!outbound) throw new OperationFailedError('send record disappeared (account deleted?)');
  if (outbound.async) {
    // The first request was answered "queued": so is its replay, with the same send.
    options.onQueued?.({ messageId: earlier.messageId, notBefore: outbound.notBefore ?? 0 });
    return earlier.messageId;
  }
  services.log.debug({ accountId, messageId: earlier.messageId }, 'Idempotency-Key seen before: answering from its send');
  // Not this request's send: only its own deadline ends the wait, not this client leaving.
  await waitForOutcome(services, accountId, earlier.messageId, outbound.deadline);
  return earlier.messageId;
}

/** Resolves once the send is `sent`; throws for every other outcome (see awaitFinished). */
async function waitForOutcome(
  services: Services,
  accountId: string,
  messageId: string,
  deadline: number,
  signal?: AbortSignal,
): Promise<void> {
  answerOf(await awaitFinished(services, SEND_WAIT, accountId, messageId, deadline, signal));
}

function answerOf(outbound: Outbound): void {
  if (outbound.status === 'sent') return;
  if (outbound.status === 'unknown') throw new SendOutcomeUnknownError(outbound.reason ?? 'outcome unknown');
  if (outbound.retryAt !== undefined) throw new SendPausedError(outbound.reason ?? 'sending paused', outbound.retryAt);
  throw new OperationFailedError(outbound.reason ?? 'send failed');
}
