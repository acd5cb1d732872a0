import { AccountNotConnectedError, OperationFailedError, SendTimeoutError } from '../core/errors.js';
import { newCommandId, newMessageId } from '../core/ids.js';
import type { Account } from '../core/schemas/account.js';
import type { SendCommand } from '../core/schemas/command.js';
import { expireOutbound, findOutbound, putPendingOutbound } from '../core/store/outbound.js';
import type { Services } from './services.js';

export interface SendIds {
  messageId: string;
  commandId: string;
}

/** Fails at once, without enqueuing, when the account cannot send. */
export function assertConnected(account: Account): void {
  if (account.currentStatus !== 'connected') {
    throw new AccountNotConnectedError(`account ${account._id} is ${account.currentStatus}, not connected`);
  }
}

/**
 * The one send path shared by every send route:
 *
 *   function: outbound=pending ─► enqueue command ─► poll outbound (consistent reads) ─┐
 *   connector:                     receive ─► send on WhatsApp ─► outbound=sent|failed ─┘
 *
 * Answers the message id once the connector records `sent`; throws OperationFailedError with the
 * connector's reason on `failed`, and after SEND_TIMEOUT_MS marks the send failed (unless the
 * connector settled it in that instant) so that a late connector skips it.
 */
export async function sendAndWait(
  services: Services,
  account: Account,
  buildCommand: (ids: SendIds) => SendCommand,
  signal?: AbortSignal,
): Promise<string> {
  assertConnected(account);
  const ids: SendIds = { messageId: newMessageId(), commandId: newCommandId() };
  await putPendingOutbound(services.table, account._id, ids);
  await services.queues.sendCommand(buildCommand(ids));
  await waitForOutcome(services, account._id, ids.messageId, services.config.SEND_TIMEOUT_MS, signal);
  return ids.messageId;
}

const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 250;

export async function waitForOutcome(
  services: Services,
  accountId: string,
  messageId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let interval = FIRST_POLL_MS;
  for (;;) {
    const outbound = await findOutbound(services.table, accountId, messageId, true);
    if (outbound?.status === 'sent') return;
    if (outbound?.status === 'failed') throw new OperationFailedError(outbound.reason ?? 'send failed');
    if (!outbound) throw new OperationFailedError('send record disappeared (account deleted?)');
    const remaining = deadline - Date.now();
    if (remaining <= 0 || signal?.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(interval, remaining)));
    interval = Math.min(MAX_POLL_MS, interval * 2);
  }
  const reason = `no answer from the connector within ${timeoutMs} ms`;
  if (await expireOutbound(services.table, accountId, messageId, reason)) throw new SendTimeoutError(reason);
  // The connector settled it between our last read and the expiry: report what it recorded.
  const settled = await findOutbound(services.table, accountId, messageId, true);
  if (settled?.status === 'sent') return;
  throw new OperationFailedError(settled?.reason ?? reason);
}
