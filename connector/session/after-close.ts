import type { ConnectionState } from '@whiskeysockets/baileys';
import type { Logger } from '../../core/logger.js';
import type { AccountStatus, StatusReason } from '../../core/schemas/account.js';
import { waVersionText, type WaVersion } from '../../core/wa-version.js';
import type { DynamoAuthState } from '../auth/dynamo-auth-state.js';
import type { WaVersionKeeper } from '../wa-version/wa-version-keeper.js';
import { isWindingDown, type Lifecycle } from './lifecycle.js';
import { dropUnfinishedCodeLink } from './link-phase.js';
import { closeReason, decideAfterClose } from './reconnect-policy.js';
import type { ProxyFailure } from '../network/account-proxy.js';

/** The status code a socket closed with. */
export const closeCodeOf = (update: Partial<ConnectionState>): number | undefined => {
  const error = update.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined;
  return error?.output?.statusCode;
};

/** While WhatsApp keeps refusing the version and no newer one is found, one warn line per account this often. */
const VERSION_REFUSED_WARN_EVERY_MS = 60 * 60_000;

/** The session's count of what went wrong since its last login; a login resets it (`loggedIn`). */
export interface LoginTries {
  failures: number;
  qrRounds: number;
  /** Logins refused for their version since the last one that succeeded. */
  refusedLogins: number;
  lastVersionWarnAt: number;
  /** How the last socket failed at its proxy: a status that stays is reported once per failure, not at every retry. */
  proxyFailure?: ProxyFailure | undefined;
}

export const loginTries = (): LoginTries => ({
  failures: 0,
  qrRounds: 0,
  refusedLogins: 0,
  lastVersionWarnAt: Number.NEGATIVE_INFINITY,
});

export function loggedIn(tries: LoginTries): void {
  tries.failures = 0;
  tries.qrRounds = 0;
  tries.refusedLogins = 0;
  tries.proxyFailure = undefined;
}

/** What a close does to its session: the session implements it over its own state. */
export interface ClosingSession {
  readonly log: Logger;
  readonly tries: LoginTries;
  lifecycle(): Lifecycle;
  move(next: Lifecycle, change?: { reason?: StatusReason; status?: AccountStatus; report?: boolean }): Promise<void>;
  openSocket(): void;
  /** Opens a socket after `delayMs`, unless the session stops first. */
  openSocketLater(delayMs: number): void;
  /** The session ended by itself (`AccountSessionDeps.onEnded`). */
  ended(why: 'logged_out' | 'qr_not_scanned'): void;
  /** The version the closed socket announced. */
  announcedVersion(): WaVersion | undefined;
  waVersion: Pick<WaVersionKeeper, 'current' | 'newerThan'>;
}

/**
 * What happens after the socket of a session that still runs closed with `statusCode`: the
 * creds are stored, `decideAfterClose` says what next, and the session reconnects, waits,
 * ends or logs in again with a newer version.
 */
export async function afterClose(
  session: ClosingSession,
  auth: DynamoAuthState,
  statusCode: number | undefined,
  proxyFailure?: ProxyFailure,
): Promise<void> {
  const { log, tries } = session;
  // Creds Baileys just changed (pairing, pre-keys) must be stored before the next login uses them.
  await auth.flush().catch((error: unknown) => log.error({ err: error }, 'creds write failed'));
  await dropUnfinishedCodeLink(auth, log);
  const linked = auth.isLinked();
  const decision = decideAfterClose({ statusCode, failures: tries.failures, linked, qrRounds: tries.qrRounds });
  // A socket that never got through its proxy closes as a plain drop for Baileys; the proxy's
  // failure says what the user can fix (a drop is retried the same way, with the settings of then).
  const reason = proxyFailure ?? closeReason(statusCode, linked);
  if (session.lifecycle() === 'awaiting_scan') tries.qrRounds += 1;
  log.info({ statusCode, decision: decision.kind, reason }, 'connection closed');
  if (
    session.lifecycle() === 'halted' &&
    (decision.kind === 'restart_now' || decision.kind === 'retry_later' || decision.kind === 'version_refused')
  ) {
    log.info('not reconnecting: the connector is stopping');
    return;
  }
  switch (decision.kind) {
    case 'restart_now': {
      const lifecycle = session.lifecycle();
      // A connected account is reconnecting meanwhile; a link in progress stays `connecting`.
      const next = lifecycle === 'connected' ? 'reconnecting' : lifecycle === 'awaiting_scan' ? 'connecting' : lifecycle;
      if (next !== lifecycle) await session.move(next, { reason });
      session.openSocket();
      return;
    }
    case 'retry_later': {
      tries.failures += 1;
      // A status that stays (`connecting` before a first login) still says why, once per failure.
      const report = proxyFailure !== undefined && proxyFailure !== tries.proxyFailure;
      tries.proxyFailure = proxyFailure;
      await session.move(linked ? 'reconnecting' : 'connecting', { reason, ...(report ? { report } : {}) });
      // The status write above may have overlapped haltReconnects().
      if (isWindingDown(session.lifecycle())) return;
      session.openSocketLater(decision.delayMs);
      log.info({ delayMs: decision.delayMs }, 'reconnect scheduled');
      return;
    }
    case 'logged_out':
      await auth.clear().catch((error: unknown) => log.error({ err: error }, 'clearing credentials failed'));
      await session.move('logged_out', { reason });
      log.warn({ reason }, 'logged out by the phone: credentials cleared, connect to link again');
      session.ended('logged_out');
      return;
    case 'version_refused':
      await loginAgainAfterRefusal(session, linked, reason, decision.delayMs);
      return;
    case 'give_up_qr':
      await session.move('stopped', { reason: 'qr_timeout', status: 'not_started' });
      log.warn('QR was not scanned in time: connect again for a new QR');
      session.ended('qr_not_scanned');
      return;
  }
}

/**
 * WhatsApp refused the announced version (405, `client_too_old`). Reported on the account (event
 * and `lastDisconnect`) for the first refusal of a run even when the status stays
 * `reconnecting`; then the login is tried again at once with a newer version when the keeper
 * finds one, else after `delayMs` (the drop backoff), with one warn line an hour.
 */
async function loginAgainAfterRefusal(session: ClosingSession, linked: boolean, reason: StatusReason, delayMs: number): Promise<void> {
  const { log, tries } = session;
  tries.refusedLogins += 1;
  tries.failures += 1;
  const refused = session.announcedVersion() ?? session.waVersion.current().version;
  await session.move(linked ? 'reconnecting' : 'connecting', { reason, report: tries.refusedLogins === 1 });
  const newer = await session.waVersion.newerThan(refused);
  if (isWindingDown(session.lifecycle())) return;
  if (newer) {
    log.info(
      { refused: waVersionText(refused), version: waVersionText(newer) },
      'WhatsApp refused the version: logging in with a newer one',
    );
    session.openSocket();
    return;
  }
  const at = Date.now();
  const line = { refused: waVersionText(refused), refusedLogins: tries.refusedLogins, delayMs };
  if (at - tries.lastVersionWarnAt >= VERSION_REFUSED_WARN_EVERY_MS) {
    tries.lastVersionWarnAt = at;
    log.warn(line, 'WhatsApp refuses the version and no newer one is found: retrying (docs/connector.md, "When WhatsApp moves")');
  } else log.info(line, 'WhatsApp refused the version again: retrying');
  session.openSocketLater(delayMs);
}
