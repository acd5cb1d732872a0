import { z } from 'zod';

/**
 * WhatsApp's own limits (docs/sending.md#whatsapps-refusals): when WhatsApp refuses a
 * send with a nack (`<ack class="message" error="…">`), the send fails, and for the two refusals
 * that mean "this number is sending too much" the account's sending pauses. This module is the
 * pure part: which nack means what, and how long the next pause lasts.
 */

/** Why an account's sending is paused: error 429 (`rate-overlimit`) or 463 (reach-out time-lock). */
export const sendPauseReasonSchema = z.enum(['rate_limited', 'reachout_timelock']);
export type SendPauseReason = z.infer<typeof sendPauseReasonSchema>;

const PAUSING_ERRORS: Record<string, SendPauseReason> = { '429': 'rate_limited', '463': 'reachout_timelock' };

/** A nack as the send handler reports it: the error's text (the API's `detail`) and the pause it calls for. */
export interface Refusal {
  /** `WhatsApp refused the send: reachout_timelock (463)`, or `… (error 479)` for one that does not pause. */
  detail: string;
  pause?: SendPauseReason;
}

export function refusalOf(error: string): Refusal {
  const pause = PAUSING_ERRORS[error];
  return pause
    ? { detail: `WhatsApp refused the send: ${pause} (${error})`, pause }
    : { detail: `WhatsApp refused the send (error ${error})` };
}

/**
 * The pause as stored on the account row (DynamoDB). The API shows `{reason, until}` while
 * `until` is ahead; `durationMs` stays for the doubling after the pause has ended, so nothing is
 * written when sending resumes.
 */
export const storedSendPauseSchema = z.object({
  reason: sendPauseReasonSchema,
  /** Unix ms: sending resumes by itself then. */
  until: z.number().int(),
  /** This pause's length: it began at `until - durationMs`. */
  durationMs: z.number().int().positive(),
});
export type StoredSendPause = z.infer<typeof storedSendPauseSchema>;

/** The longest pause: WhatsApp's reach-out time-locks are counted in hours to days; past a day, a person should look. */
export const MAX_SEND_PAUSE_MS = 24 * 60 * 60_000;

/** The pause in force at `now`, if any. */
export function activePause(pause: StoredSendPause | undefined, now = Date.now()): StoredSendPause | undefined {
  return pause && pause.until > now ? pause : undefined;
}

/** `Retry-After` of a send refused until `until`: whole seconds, at least 1. */
export function retryAfterSeconds(until: number, now = Date.now()): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}

/**
 * The pause after a nack with `reason` at `now` of a send handed to WhatsApp at `sentAt`, given
 * the account's last pause (`previous`); undefined: the pause stays as it is.
 *
 *   previous pause           its echo window
 *   |---- durationMs ----|---- durationMs ----|
 *   since               until                 until + durationMs
 *
 * - A send handed over before the last pause began (it was in flight when the first nack came)
 *   changes nothing: one burst is one refusal, not several.
 * - A nack within the pause (a send that got past it) or within as long again after it is a
 *   repeat: the next pause lasts twice the last one, up to MAX_SEND_PAUSE_MS.
 * - Otherwise the pause starts again from `minMs` (at least 60 s outside tests).
 */
export function nextPause(
  previous: StoredSendPause | undefined,
  refusal: { reason: SendPauseReason; sentAt: number; now: number },
  minMs: number,
): StoredSendPause | undefined {
  const { reason, sentAt, now } = refusal;
  if (previous) {
    const since = previous.until - previous.durationMs;
    if (sentAt < since) return undefined;
    if (now < previous.until + previous.durationMs) {
      const durationMs = Math.min(previous.durationMs * 2, MAX_SEND_PAUSE_MS);
      return { reason, until: now + durationMs, durationMs };
    }
  }
  const durationMs = Math.min(minMs, MAX_SEND_PAUSE_MS);
  return { reason, until: now + durationMs, durationMs };
}

/**
 * Commands that send no message (read receipts, presence, a history request to the account's
 * own phone, a media download): a pause does not hold them, since WhatsApp's limits count messages.
 */
const NOT_MESSAGES: ReadonlySet<string> = new Set(['mark_chat_read', 'send_presence', 'request_history', 'fetch_media']);
export const isMessageSend = (commandType: string): boolean => !NOT_MESSAGES.has(commandType);

/** The `detail` of a send refused because the account's sending is paused. */
export const pausedDetail = (reason: SendPauseReason): string => `sending paused: ${reason}`;
