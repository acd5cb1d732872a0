import type { AuthenticationCreds } from '@whiskeysockets/baileys';
import type { Logger } from '../../core/logger.js';

/**
 * How long a socket waits for a link before Baileys closes it (408): its first QR lives 60 s,
 * each next one 20 s, and WhatsApp sends six refs (Baileys socket.js, `pair-device`). A pairing
 * code belongs to the socket that asked for it, so it lives as long as that socket's link phase.
 */
export const LINK_PHASE_MS = 60_000 + 5 * 20_000;

/**
 * Like the QR, the pairing code is logged at info: the API contract puts it in the server log,
 * as one structured line (`accountId`, `pairingCode`). `logger` is the session's, bound to the
 * account id.
 */
export function logPairingCode(logger: Logger, code: string, expiresAt: number): void {
  logger.info(
    { pairingCode: code, expiresAt, event: 'pairing_code' },
    'pairing code ready: enter it on the phone in WhatsApp > Linked devices > Link with phone number',
  );
}

/**
 * Baileys' `requestPairingCode` writes the number into `creds.me` before anything is linked, so
 * a socket opened with those creds logs in as a device that does not exist and is logged out
 * (401). A device is linked only once pair-success gave it its signed identity (`account`):
 * without one, the half-made identity is dropped so the next socket registers afresh (a new
 * QR, a new code). True when something was dropped.
 */
export function forgetUnfinishedCodeLink(creds: AuthenticationCreds): boolean {
  if (!creds.me || creds.account) return false;
  creds.me = undefined;
  creds.pairingCode = undefined;
  creds.registered = false;
  return true;
}

/** The device has its signed identity from the phone (QR or code): a code cannot link it again. */
export const hasLinkedIdentity = (creds: AuthenticationCreds): boolean => Boolean(creds.me?.id && creds.account);
