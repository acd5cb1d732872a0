import type { AccountStatus } from '../../core/schemas/account.js';

/**
 * Where one AccountSession stands (docs/connector.md, "Session lifecycle"). The account's
 * status and `hasQR` follow from it, so the session keeps no flags beside it.
 */
export type Lifecycle =
  /** Made, not started yet. */
  | 'idle'
  /** A socket opens (or will, after a delay) for a device that is not linked yet, or for a first connect. */
  | 'connecting'
  /** The current socket showed a QR: a scan or a pairing code can link it. */
  | 'awaiting_scan'
  /** A linked device's socket opens again (or will, after a delay). */
  | 'reconnecting'
  | 'connected'
  /** The connector shuts down: no socket is opened again; a connected one serves the commands still in flight. */
  | 'halted'
  /** Closed for good: stop(), logout before deletion, the QR never scanned, the account gone. */
  | 'stopped'
  /** The phone unlinked the device (or WhatsApp removed the account): credentials cleared. */
  | 'logged_out';

/** The moves a session can make; anything else is refused (`canMove`). Staying put rewrites the status. */
const NEXT: Record<Lifecycle, readonly Lifecycle[]> = {
  idle: ['idle', 'connecting', 'reconnecting', 'halted', 'stopped'],
  connecting: ['connecting', 'awaiting_scan', 'reconnecting', 'connected', 'halted', 'stopped', 'logged_out'],
  awaiting_scan: ['awaiting_scan', 'connecting', 'reconnecting', 'connected', 'halted', 'stopped', 'logged_out'],
  reconnecting: ['reconnecting', 'connecting', 'awaiting_scan', 'connected', 'halted', 'stopped', 'logged_out'],
  // A connected socket never shows a QR: a device that lost its link closes with 401 first.
  connected: ['connected', 'connecting', 'reconnecting', 'halted', 'stopped', 'logged_out'],
  // Halted: only ending is left (a 401 or an unscanned QR still ends the session as it would).
  halted: ['halted', 'stopped', 'logged_out'],
  stopped: ['stopped'],
  // A logged-out session is still closed by its removal from the registry.
  logged_out: ['logged_out', 'stopped'],
};

export function canMove(from: Lifecycle, to: Lifecycle): boolean {
  return NEXT[from].includes(to);
}

/** No socket will be opened again in these. */
export function isWindingDown(lifecycle: Lifecycle): boolean {
  return lifecycle === 'halted' || lifecycle === 'stopped' || lifecycle === 'logged_out';
}

/**
 * The account status a lifecycle stands for; undefined where it keeps the status it had
 * (`halted`: the status belongs to whoever runs the account next; `stopped` is given its
 * final status by the caller, or keeps it).
 */
export function statusOf(lifecycle: Lifecycle): { status: AccountStatus; hasQR: boolean } | undefined {
  switch (lifecycle) {
    case 'idle':
      return { status: 'not_started', hasQR: false };
    case 'connecting':
      return { status: 'connecting', hasQR: false };
    case 'awaiting_scan':
      return { status: 'connecting', hasQR: true };
    case 'reconnecting':
      return { status: 'reconnecting', hasQR: false };
    case 'connected':
      return { status: 'connected', hasQR: false };
    case 'logged_out':
      return { status: 'logged_out', hasQR: false };
    case 'halted':
    case 'stopped':
      return undefined;
  }
}
