import { DisconnectReason } from '@whiskeysockets/baileys';
import type { StatusReason } from '../../core/schemas/account.js';

/**
 * What a session does after its socket closed on its own (not through stop()), one named
 * branch per reason Baileys reports. Pure, so it is tested without a socket.
 */
export type ReconnectDecision =
  /** Pairing finished (515): the network wants a fresh login right away. */
  | { kind: 'restart_now' }
  /** A drop: try again after `delayMs` (about 5 s, longer on repeated failures). */
  | { kind: 'retry_later'; delayMs: number }
  /** The phone unlinked this device (or the account is barred): creds are void. */
  | { kind: 'logged_out' }
  /** Nobody scanned the QR in time, several times over: stop asking. */
  | { kind: 'give_up_qr' }
  /**
   * WhatsApp refused the version the socket announced (405): log in again at once with a newer
   * one when one is found, else after `delayMs` like a drop.
   */
  | { kind: 'version_refused'; delayMs: number };

/**
 * `<failure reason="405"/>` at login: WhatsApp no longer accepts the client's version
 * (`client_too_old`). Baileys has no name for it; it reports the failure's reason as the code.
 */
const CLIENT_TOO_OLD = 405;

const BASE_RECONNECT_DELAY_MS = 5_000;
const MAX_RECONNECT_DELAY_MS = 60_000;
/** QR rounds (each about two minutes of codes) before an unscanned account is parked. */
export const MAX_QR_ROUNDS = 3;

export interface CloseContext {
  statusCode: number | undefined;
  /** Consecutive closes without a successful open in between (0 for the first). */
  failures: number;
  /** Creds belong to a linked device. */
  linked: boolean;
  /** QR rounds already shown without a scan. */
  qrRounds: number;
  random?: () => number;
}

/** 5 s, 10 s, 20 s ... capped at 60 s, each with ±20 % jitter so accounts do not reconnect in lockstep. */
export function reconnectDelay(failures: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_RECONNECT_DELAY_MS, BASE_RECONNECT_DELAY_MS * 2 ** Math.min(failures, 4));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export function decideAfterClose(context: CloseContext): ReconnectDecision {
  const { statusCode, failures, linked, qrRounds, random } = context;
  switch (statusCode) {
    case DisconnectReason.restartRequired:
      return { kind: 'restart_now' };
    case DisconnectReason.loggedOut:
    case DisconnectReason.forbidden:
      return { kind: 'logged_out' };
    case CLIENT_TOO_OLD:
      return { kind: 'version_refused', delayMs: reconnectDelay(failures, random) };
    case DisconnectReason.timedOut:
      // Before linking, 408 means the QR codes ran out; after, a lost connection.
      if (!linked && qrRounds + 1 >= MAX_QR_ROUNDS) return { kind: 'give_up_qr' };
      return { kind: 'retry_later', delayMs: reconnectDelay(failures, random) };
    case DisconnectReason.connectionReplaced:
    case DisconnectReason.connectionClosed:
    case DisconnectReason.badSession:
    case DisconnectReason.unavailableService:
    case DisconnectReason.multideviceMismatch:
    default:
      return { kind: 'retry_later', delayMs: reconnectDelay(failures, random) };
  }
}

/**
 * The `reason` a close gives the account's status (docs/webhooks.md). Baileys turns
 * `<stream:error code="515">` into 515, `<stream:error><conflict type="replaced"/>` into 440,
 * `<stream:error code="401"><conflict type="device_removed"/>` into 401 and
 * `<failure reason="403"/>` into 403 and `<failure reason="405"/>` into 405; a socket that closed or timed out without a stanza gives
 * 428 or 408.
 */
export function closeReason(statusCode: number | undefined, linked: boolean): StatusReason {
  switch (statusCode) {
    case DisconnectReason.restartRequired:
      return 'restart_required';
    case DisconnectReason.loggedOut:
      return 'logged_out';
    case DisconnectReason.forbidden:
      return 'removed_by_whatsapp';
    case DisconnectReason.connectionReplaced:
      return 'replaced';
    case CLIENT_TOO_OLD:
      return 'client_too_old';
    case DisconnectReason.timedOut:
      // Before linking, 408 means the QR codes ran out.
      return linked ? 'connection_lost' : 'qr_timeout';
    default:
      return 'connection_lost';
  }
}
