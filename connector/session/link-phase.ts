import type { WASocket } from '@whiskeysockets/baileys';
import type { Logger } from '../../core/logger.js';
import type { Table } from '../../core/store/table.js';
import type { DynamoAuthState } from '../auth/dynamo-auth-state.js';
import type { NetworkOptions } from '../network/network-options.js';
import { isWindingDown, type Lifecycle } from './lifecycle.js';
import { forgetUnfinishedCodeLink, hasLinkedIdentity, LINK_PHASE_MS, logPairingCode } from './pairing-code.js';
import { publishQr, qrLifetimeMs } from './qr-log.js';
import type { SessionEvents } from './session-events.js';

/** Where a session stands for linking by code: its socket waits for a link, or the device is linked already. */
export type LinkPhase = 'awaiting_link' | 'linked' | 'not_ready';

/**
 * The link phase of a session that stands at `lifecycle` with `auth` and `sock`; undefined while
 * it is none of them yet (`AccountSession.awaitLinkPhase` waits on it).
 */
export function linkPhaseOf(lifecycle: Lifecycle, auth: DynamoAuthState | undefined, sock: WASocket | undefined): LinkPhase | undefined {
  if (lifecycle === 'connected' || (auth && hasLinkedIdentity(auth.state.creds))) return 'linked';
  if (isWindingDown(lifecycle)) return 'not_ready';
  if (sock?.ws.isOpen && lifecycle === 'awaiting_scan') return 'awaiting_link';
  return undefined;
}

/**
 * Asks WhatsApp on `sock`, the session's socket, for the pairing code of `phoneNumber` (see
 * `AccountSession.requestPairingCode`). `linkPhaseStartedAt`: when that socket showed its first QR.
 */
export async function requestPairingCode(
  sock: WASocket | undefined,
  lifecycle: Lifecycle,
  linkPhaseStartedAt: number | undefined,
  phoneNumber: string,
  log: Logger,
): Promise<{ code: string; expiresAt: number }> {
  if (!sock?.ws.isOpen || lifecycle !== 'awaiting_scan') throw new Error('the socket is not waiting for a link');
  const code = await sock.requestPairingCode(phoneNumber);
  const expiresAt = Math.max(Date.now(), (linkPhaseStartedAt ?? Date.now()) + LINK_PHASE_MS);
  logPairingCode(log, code, expiresAt);
  return { code, expiresAt };
}

export async function dropUnfinishedCodeLink(auth: DynamoAuthState, log: Logger): Promise<void> {
  if (!forgetUnfinishedCodeLink(auth.state.creds)) return;
  log.info('pairing code was not entered: the next socket registers afresh');
  await auth.saveCreds().catch((error: unknown) => log.error({ err: error }, 'creds write failed'));
}

/** Where a QR of the account goes: the log and the table (qr-log.ts), and a webhook event. */
export interface QrTargets {
  table: Table;
  log: Logger;
  accountId: string;
  network: NetworkOptions;
  printTerminalQr: (text: string) => void;
  events: SessionEvents;
}

/** Publishes a QR the socket showed; `first`: the first of its link phase. */
export async function showQr(targets: QrTargets, qr: string, first: boolean): Promise<void> {
  const timestamp = Date.now();
  const lifetimeMs = qrLifetimeMs(first, targets.network.socket.qrTimeout);
  const expiresAt = await publishQr(targets.table, targets.log, targets.accountId, qr, lifetimeMs, targets.printTerminalQr, timestamp);
  targets.events.qr(targets.accountId, { qr, expiresAt, timestamp });
}
