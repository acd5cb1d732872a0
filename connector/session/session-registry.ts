import type { Logger } from '../../core/logger.js';
import { findAccount, holdsItsCollection, listAccounts } from '../../core/store/accounts.js';
import { settingsOf } from '../../core/store/account-settings.js';
import type { Table } from '../../core/store/table.js';
import type { Account, AccountStatus } from '../../core/schemas/account.js';
import { NotFoundError } from '../../core/errors.js';
import { KeyedSerial } from '../../core/serial.js';
import type { NetworkOptions } from '../network/network-options.js';
import type { Ownership } from '../ownership/ownership.js';
import type { AccountSession, FinalStatus, SessionEndReason, StartReason } from './account-session.js';
import { loadAccountSession } from './load-account-session.js';
import type { InboundHandlers } from './event-dispatcher.js';
import type { SessionEvents } from './session-events.js';
import { AccountStatusWriter } from './status-writer.js';
import type { WaVersionKeeper } from '../wa-version/wa-version-keeper.js';

export interface SessionRegistryDeps {
  table: Table;
  network: NetworkOptions;
  ownership: Ownership;
  inbound: InboundHandlers;
  logger: Logger;
  printTerminalQr: (text: string) => void;
  events: SessionEvents;
  /** The WhatsApp Web version the sessions announce. */
  waVersion: WaVersionKeeper;
  /** Scale-out: whether the account's shard is this connector's (unset: every account is). */
  isMine?: (accountId: string) => boolean;
  /** `sendPolicy.enabled` of accounts stored without settings (SEND_PACING_DEFAULT; default on). */
  pacing?: boolean;
  /** Takes the send pause stored with an account whose session starts here (commands/send-pauses.ts). */
  sendPauses?: { load(accountId: string, stored: Account['sendPause']): void; active(accountId: string): unknown };
  /** The paced sends of the accounts running here (connector/pacing/pacer.ts). */
  pacer?: { started(accountId: string): void; stopped(accountId: string): Promise<void>; loggedOut(accountId: string): void };
}

/** What `refreshSettings` found. */
export type SettingsRefresh = 'applied' | 'no_session' | 'account_not_found';

export type StartOutcome = 'started' | 'already_running' | 'owned_elsewhere' | 'account_not_found';

/** Statuses of accounts that should have a socket somewhere. */
/**
 * Accounts started at once by a scan. A start is five requests one after another (the account,
 * its collection's holder, the lease, the creds, the status) before the socket opens beside the
 * next: one at a time, a connector taking over a hundred accounts spent seconds in round trips
 * alone (docs/benchmarks.md, Scale-out). The logins that follow share the CPU however many start.
 */
const RESUMES_AT_ONCE = 8;
/** How soon a scan follows one whose start of an account failed. */
const RESCAN_AFTER_FAILURE_MS = 10_000;
const RUNNING_STATUSES: ReadonlySet<AccountStatus> = new Set(['connecting', 'connected', 'reconnecting']);

/** How a session leaves the registry. */
interface Removal {
  /**
   * `stop`: the socket is closed, writing `finalStatus` if one is given; `logout`: the device is
   * unlinked first; `ended`: the session closed itself already.
   */
  close: 'stop' | 'logout' | 'ended';
  final?: FinalStatus | ((session: AccountSession) => FinalStatus | undefined);
  /** Gives the lease up; not when it was lost, or when it goes with the account's data. */
  release: boolean;
  /** Removes only this session: a newer one may have taken its place meanwhile. */
  onlyIf?: AccountSession;
}

/** A lease that may be another connector's already: the socket closes, nothing is released or written. */
const LEASE_LOST: Removal = { close: 'stop', release: false };

/**
 * The sessions this connector runs, each guarded by a lease: a session exists only while its
 * lease is held, and the leases are held by the connector's heartbeat (ownership/heartbeat.ts):
 * when that is lost, every session is dropped at once (`dropAll`). Picks up accounts that should
 * run but nobody owns (at start: resume; later: takeover of a dead connector's accounts).
 * Operations on one account are serialized.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, AccountSession>();
  private readonly perAccount = new KeyedSerial();
  private scanTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private scans = 0;
  private readonly scanListeners = new Set<() => void>();
  private readonly scansInFlight = new Set<Promise<void>>();

  private readonly statusWriter: AccountStatusWriter;

  constructor(private readonly deps: SessionRegistryDeps) {
    this.statusWriter = new AccountStatusWriter({ table: deps.table, events: deps.events, logger: deps.logger });
  }

  get ownerId(): string {
    return this.deps.ownership.ownerId;
  }

  /** Account ids with a session here. */
  accountIds(): string[] {
    return [...this.sessions.keys()];
  }

  get(accountId: string): AccountSession | undefined {
    return this.sessions.get(accountId);
  }

  /** Completed ownership scans (tests wait on it instead of sleeping). */
  get scanCount(): number {
    return this.scans;
  }

  /** Resolves after `count` more scans have completed. */
  waitForScans(count: number): Promise<void> {
    const target = this.scans + count;
    return new Promise((resolve) => {
      const check = () => {
        if (this.scans >= target) {
          this.scanListeners.delete(check);
          resolve();
        }
      };
      this.scanListeners.add(check);
    });
  }

  /** First scan (resume) now, then the scan loop. */
  async begin(): Promise<void> {
    await this.scanForUnownedAccounts();
    const { scanEveryMs } = this.deps.ownership.timing;
    this.scanTimer = setInterval(() => void this.scanForUnownedAccounts(), scanEveryMs);
  }

  /** Opens a session for the account unless another connector owns it. */
  start(accountId: string, reason: StartReason): Promise<StartOutcome> {
    return this.perAccount.run(accountId, async () => {
      if (this.closing) return 'owned_elsewhere';
      if (this.sessions.has(accountId)) return 'already_running';
      if (this.deps.isMine && !this.deps.isMine(accountId)) return 'owned_elsewhere';
      const account = await findAccount(this.deps.table, accountId, true);
      if (!account) return 'account_not_found';
      if (!(await holdsItsCollection(this.deps.table, account))) {
        // Another account's WhatsApp session: connecting would take it over. `not_started`
        // keeps the resume scan from trying again.
        this.deps.logger.warn({ accountId }, 'collectionName held by another account; session not started');
        await this.statusWriter
          .record({
            accountId,
            status: 'not_started',
            previousStatus: account.status,
            silentBecause: 'its collectionName belongs to another account: no session ran, and no reason of a session applies',
          })
          .catch((error: unknown) => {
            if (!(error instanceof NotFoundError)) this.deps.logger.error({ err: error, accountId }, 'status write failed');
          });
        return 'account_not_found';
      }
      const epoch = this.deps.ownership.epoch;
      if (!epoch || !(await this.deps.ownership.acquire(accountId, epoch))) return 'owned_elsewhere';
      const AccountSession = await loadAccountSession(this.deps.network);
      // Checked again after the last await, in the same tick as the session is registered: a
      // shutdown or a shard given up meanwhile hands over only the sessions registered when it
      // does, so one registered after would run on here, its lease held, while the shard's new
      // owner could never start it (docs/design.md, Scale-out). A heartbeat lost meanwhile
      // dropped only the sessions registered then, and the lease's epoch is dead to the others.
      if (this.closing || (this.deps.isMine && !this.deps.isMine(accountId)) || this.deps.ownership.epoch !== epoch) {
        await this.deps.ownership.release(accountId);
        return 'owned_elsewhere';
      }
      const session = new AccountSession({
        accountId,
        collectionName: account.collectionName,
        table: this.deps.table,
        network: this.deps.network,
        logger: this.deps.logger,
        inbound: this.deps.inbound,
        printTerminalQr: this.deps.printTerminalQr,
        events: this.deps.events,
        // A `connect` follows the route's write of `connecting`: the session's status changes count from there.
        recordedStatus: reason === 'connect' ? 'connecting' : account.status,
        settings: settingsOf(account, this.deps.pacing ?? true),
        sendingPaused: () => this.deps.sendPauses?.active(accountId) !== undefined,
        linkedAt: account.linkedAt,
        statusWriter: this.statusWriter,
        waVersion: this.deps.waVersion,
        onEnded: (id, why) => void this.onSessionEnded(id, session, why),
      });
      this.sessions.set(accountId, session);
      // From the read that starts the session: the pause costs no request of its own.
      this.deps.sendPauses?.load(accountId, account.sendPause);
      // Its queued sends, replayed on every taking of the account (connector/pacing/).
      this.deps.pacer?.started(accountId);
      try {
        await session.start(reason);
      } catch (error) {
        this.sessions.delete(accountId);
        await this.deps.pacer?.stopped(accountId);
        await session.stop().catch(() => undefined);
        await this.deps.ownership.release(accountId);
        throw error;
      }
      return 'started';
    });
  }

  /**
   * The account's settings changed (the `settings_changed` command): its session here reads them
   * again, strongly consistent, and applies them at once. In turn with the account's other
   * operations, so a start that read the account before the change is done first and then
   * brought up to date.
   */
  refreshSettings(accountId: string): Promise<SettingsRefresh> {
    return this.perAccount.run(accountId, async () => {
      const session = this.sessions.get(accountId);
      if (!session) return 'no_session';
      const account = await findAccount(this.deps.table, accountId, true);
      if (!account) return 'account_not_found';
      session.applySettings(settingsOf(account, this.deps.pacing ?? true));
      return 'applied';
    });
  }

  /**
   * The disconnect route: closes the account's session here (keeping its data) and writes
   * `finalStatus` (reason `stopped`). Without a session here the status is still written, unless
   * the account is gone, and a change is still an event.
   */
  stop(accountId: string, finalStatus: AccountStatus): Promise<void> {
    const final: FinalStatus = { status: finalStatus, reason: 'stopped' };
    return this.perAccount.run(accountId, async () => {
      if (await this.remove(accountId, { close: 'stop', final, release: true })) return;
      const account = await findAccount(this.deps.table, accountId, true);
      if (!account) return;
      const change = { accountId, status: finalStatus, previousStatus: account.status, reason: final.reason };
      await this.statusWriter.record(change).catch((error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error;
      });
    });
  }

  /** Unlinks and closes the session before the account's data is deleted (the lease goes with the data). */
  end(accountId: string): Promise<void> {
    return this.perAccount.run(accountId, async () => {
      await this.remove(accountId, { close: 'logout', release: false });
    });
  }

  /**
   * First step of a shutdown, before commands in flight are finished: no session is started and
   * no socket is opened any more (pending reconnects cancelled at once), so nothing new comes up
   * while the rest of the connector winds down. The heartbeat keeps the leases until they are released.
   */
  haltReconnects(): void {
    this.closing = true;
    clearInterval(this.scanTimer);
    clearTimeout(this.retryTimer);
    for (const session of this.sessions.values()) session.haltReconnects();
  }

  /**
   * Shutdown: no new sessions; every session closed (bounded each) and marked `reconnecting`
   * (reason `connection_lost`) so sends fail fast until a connector resumes it; leases released
   * so that one can start at once.
   */
  async closeAll(): Promise<void> {
    this.closing = true;
    clearInterval(this.scanTimer);
    clearTimeout(this.retryTimer);
    // A scan still reading the table would go on after the connector stopped (its starts return
    // at once now): it ends first, so that nothing is left in flight.
    await Promise.all(this.scansInFlight);
    await this.handOver(() => true);
  }

  /** Starts the accounts that should run here and nobody runs now (after shards were acquired). */
  resume(): Promise<void> {
    return this.scanForUnownedAccounts();
  }

  /** Every connector's accounts that should run, from a listing of every account. */
  async runningAccountIds(): Promise<string[]> {
    return runningOf(await listAccounts(this.deps.table));
  }

  /**
   * Graceful hand-over of the accounts `which` selects (their shard goes to another connector):
   * sockets closed, status `reconnecting` until the next owner resumes them, leases released so
   * that it can at once. The caller has stopped their commands first. `lost`: the shard may be
   * another connector's already, so its sessions go as in `dropAll` (nothing released, no status).
   */
  handOver(which: (accountId: string) => boolean, { lost = false }: { lost?: boolean } = {}): Promise<void> {
    const accountIds = this.accountIds().filter(which);
    if (lost) return this.removeEach(accountIds, LEASE_LOST);
    return this.removeEach(accountIds, {
      close: 'stop',
      final: (session) =>
        session.status !== 'not_started' && session.status !== 'logged_out'
          ? { status: 'reconnecting', reason: 'connection_lost' }
          : undefined,
      release: true,
    });
  }

  /**
   * The heartbeat is lost: another connector may take any of these accounts from now on, so
   * every session leaves at once, its socket closed, nothing released (the leases are no longer
   * ours to release), no status written (it belongs to the next owner). The next scans start
   * again those still leased to this connector.
   */
  dropAll(why: string): Promise<void> {
    const accountIds = this.accountIds();
    if (accountIds.length > 0) this.deps.logger.warn({ why, accounts: accountIds.length }, 'leases lost: closing every socket here');
    return this.removeEach(accountIds, LEASE_LOST);
  }

  private async removeEach(accountIds: string[], removal: Removal): Promise<void> {
    await Promise.all(
      accountIds.map((accountId) =>
        this.perAccount
          .run(accountId, () => this.remove(accountId, removal))
          .catch((error: unknown) => this.deps.logger.error({ err: error, accountId }, 'closing session failed')),
      ),
    );
  }

  private async onSessionEnded(accountId: string, session: AccountSession, why: SessionEndReason) {
    await this.perAccount
      .run(accountId, async () => {
        const removed = await this.remove(accountId, { close: 'ended', release: why !== 'account_deleted', onlyIf: session });
        if (removed && why === 'logged_out') this.deps.pacer?.loggedOut(accountId);
      })
      .catch((error: unknown) => this.deps.logger.error({ err: error, accountId }, 'ending session failed'));
  }

  /**
   * A start that failed (a request that failed, say) is tried again by a scan within seconds,
   * not at the next periodic one: those are minutes apart (OWNERSHIP_SCAN_MS).
   */
  private scanAgainSoon(): void {
    if (this.closing || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.scanForUnownedAccounts();
    }, RESCAN_AFTER_FAILURE_MS);
    this.retryTimer.unref();
  }

  private scanForUnownedAccounts(): Promise<void> {
    const scan = this.scanOnce();
    this.scansInFlight.add(scan);
    void scan.finally(() => this.scansInFlight.delete(scan));
    return scan;
  }

  /** One ownership scan; never rejects (a failure is logged). */
  private async scanOnce(): Promise<void> {
    if (this.closing) return;
    try {
      const accounts = await listAccounts(this.deps.table);
      const isMine = this.deps.isMine ?? (() => true);
      const running = runningOf(accounts);
      const listed = new Set(accounts.map((a) => a._id));
      for (const accountId of this.accountIds()) if (!listed.has(accountId)) void this.closeIfDeleted(accountId);
      const candidates = running.filter((id) => !this.sessions.has(id) && isMine(id));
      const unowned = await this.deps.ownership.unowned(candidates);
      this.deps.logger.debug({ accounts: accounts.length, candidates, unowned }, 'ownership scan');
      let failed = false;
      await eachAtMost(RESUMES_AT_ONCE, unowned, async (accountId) => {
        const outcome = await this.start(accountId, 'resume').catch((error: unknown) => {
          this.deps.logger.error({ err: error, accountId }, 'resuming account failed');
          failed = true;
          return undefined;
        });
        if (outcome === 'started') this.deps.logger.info({ accountId }, 'account picked up by this connector');
      });
      if (failed) this.scanAgainSoon();
    } catch (error) {
      this.deps.logger.error({ err: error }, 'ownership scan failed');
    } finally {
      this.scans += 1;
      for (const listener of [...this.scanListeners]) listener();
    }
  }

  /**
   * A session whose account the listing no longer shows. Its deletion normally ends it by command
   * (`end`); should that command never come, the account is gone all the same (its lease with it),
   * and a socket left open would write the messages it receives back into the deleted account.
   * The listing may lag behind a new account, so only a strongly consistent read decides.
   */
  private async closeIfDeleted(accountId: string): Promise<void> {
    await this.perAccount
      .run(accountId, async () => {
        if (!this.sessions.has(accountId) || (await findAccount(this.deps.table, accountId, true))) return;
        this.deps.logger.warn({ accountId }, 'account deleted without its session being ended: closing the socket here');
        await this.remove(accountId, LEASE_LOST);
      })
      .catch((error: unknown) => this.deps.logger.error({ err: error, accountId }, 'closing the session of a deleted account failed'));
  }

  /**
   * The one way a session leaves: out of every per-account map first (so nothing renews or
   * reuses it while it closes), then closed, then its lease released. False when there was no
   * such session. Runs inside `perAccount`.
   */
  private async remove(accountId: string, removal: Removal): Promise<boolean> {
    const session = this.sessions.get(accountId);
    if (!session || (removal.onlyIf && removal.onlyIf !== session)) return false;
    // A paced send under way finishes first, as commands under way do, while the session is
    // still there for it (found gone, the send would fail as "not connected").
    await this.deps.pacer?.stopped(accountId);
    if (this.sessions.get(accountId) !== session) return false;
    this.sessions.delete(accountId);
    const final = typeof removal.final === 'function' ? removal.final(session) : removal.final;
    if (removal.close === 'logout') await session.logoutAndStop();
    else if (removal.close === 'stop') await session.stop(final, { leaseLost: !removal.release });
    if (removal.release) await this.deps.ownership.release(accountId);
    return true;
  }
}

/** Runs `work` on every item, at most `limit` at once; resolves when all are done (`work` must not reject). */
async function eachAtMost<T>(limit: number, items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function runningOf(accounts: readonly Account[]): string[] {
  return accounts.filter((a) => RUNNING_STATUSES.has(a.status)).map((a) => a._id);
}
