/** One event as every target receives it, whatever the protocol (dispatch.ts chooses the sender). */
export interface TargetMessage {
  /** The stable X-Webhook-Id: the same for every target, retry and replay. */
  eventId: string;
  /** The event's name (`message`, `message.status`, ...). */
  event: string;
  accountId: string;
  /** This target's attempt at this event, from 1. */
  attempt: number;
  /** The JSON text of the event's body, built once for every target. */
  rawBody: string;
}

/**
 * Why an AWS SDK call failed, short enough for the deliveries log: `timeout after <n> ms` when
 * the attempt's time ran out, else the error's code (`QueueDoesNotExist`, `AccessDeniedException`,
 * `ECONNREFUSED`), as an HTTP failure reads `HTTP 503`.
 */
export function sdkFailureReason(error: unknown, timeoutMs: number): string {
  if (!(error instanceof Error)) return 'unknown error';
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return `timeout after ${timeoutMs} ms`;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return error.name === 'Error' ? error.message : error.name;
}
