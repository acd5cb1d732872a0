import { SendPausedError, SendQueueFullError } from '../../core/errors.js';
import { CLAIM_MARGIN_MS, estimateTurn, RATE_LIMIT_DETAIL } from '../../core/pacing/limits.js';
import { activePause, isMessageSend } from '../../core/send-pause.js';
import type { Account } from '../../core/schemas/account.js';
import type { PacedSendCommand, QueuedSend, SendCommand } from '../../core/schemas/command.js';
import { settingsOf } from '../../core/store/account-settings.js';
import { failPendingOutbound, putQueuedOutbound } from '../../core/store/outbound.js';
import { countsOf, putQueuedSend, readPaceState, takeTicket, waiting } from '../../core/store/send-queue.js';
import type { Services } from '../http/services.js';
import { pacingOf } from '../accounts/settings.js';

/**
 * Paced sends, the API's side (docs/sending.md#paced-sends): a message send of an account whose
 * `sendPolicy.enabled` is on is queued in DynamoDB (core/store/send-queue.ts) and goes out in
 * its turn from the connector's pacer (connector/pacing/). Here: whether a send is paced, its
 * turn as far as the stored counts tell (`notBefore`), the refusals (a plain send whose turn is
 * past its deadline, a full queue for an async one), and the queuing.
 */

/** How long an async send may wait for its turn; past it, it fails instead of going out days late. */
const QUEUED_SEND_MAX_MS = 30 * 24 * 60 * 60_000;

/** Whether this send of the account goes through its queue: a message send with pacing on. */
export function isPaced(services: Services, account: Account, commandType: SendCommand['type']): commandType is PacedSendCommand['type'] {
  return isMessageSend(commandType) && settingsOf(account, pacingOf(services)).sendPolicy.enabled;
}

export interface QueueSend {
  send: PacedSendCommand;
  /** `Prefer: respond-async`: answered at once (202), nobody waits. */
  async: boolean;
  /** Claims the Idempotency-Key once the send's record is written; false: another request has it (nothing is queued). */
  claimKey?: () => Promise<boolean>;
}

/**
 * Queues the send: its outbound record (`pending`, with its deadline and `notBefore`), its
 * ticket (the place in the queue; refused when the queue is full), its queue item, and the
 * queued send, for the `send_queued` command that wakes the connector running the account (the
 * caller queues it); `undefined` when the Idempotency-Key was another request's (the caller
 * answers from that one).
 */
export async function queuePacedSend(
  services: Services,
  account: Account,
  request: QueueSend,
  now = Date.now(),
): Promise<QueuedSend | undefined> {
  const { table, config } = services;
  const accountId = account._id;
  const policy = settingsOf(account, pacingOf(services)).sendPolicy;
  const state = await readPaceState(table, accountId);
  const ahead = waiting(state);
  if (request.async && ahead >= policy.queueLimit) throw new SendQueueFullError('send queue full');
  const deadline = now + (request.async ? QUEUED_SEND_MAX_MS : config.SEND_TIMEOUT_MS);
  const pause = activePause(account.sendPause, now);
  const turn = estimateTurn(countsOf(state), policy, {
    now,
    linkedAt: account.linkedAt,
    ahead,
    ...(pause ? { from: pause.until } : {}),
    until: deadline,
  });
  // A plain send waits for its turn only within its deadline; otherwise nothing is queued.
  if (!request.async && turn.earliest > deadline - CLAIM_MARGIN_MS) throw new SendPausedError(RATE_LIMIT_DETAIL, turn.earliest);

  const { messageId } = request.send.payload;
  const ids = { messageId, commandId: request.send.commandId };
  await putQueuedOutbound(table, accountId, { ...ids, deadline, notBefore: turn.notBefore, async: request.async }, now);
  if (request.claimKey && !(await request.claimKey())) return undefined;
  const ticket = await takeTicket(table, accountId, state.dequeued + policy.queueLimit);
  if (ticket === undefined) {
    // Filled up since it was read: another request took the last place.
    await failPendingOutbound(table, accountId, messageId, 'not sent: the send queue is full');
    if (request.async) throw new SendQueueFullError('send queue full');
    throw new SendPausedError(RATE_LIMIT_DETAIL, turn.earliest);
  }
  const queued: QueuedSend = {
    ticket,
    messageId,
    send: request.send,
    createdAt: new Date(now).toISOString(),
    notBefore: turn.notBefore,
    deadline,
    async: request.async,
  };
  await putQueuedSend(table, accountId, queued);
  return queued;
}
