import type { Readable } from 'node:stream';
import {
  Browsers,
  downloadMediaMessage,
  jidNormalizedUser,
  makeWASocket,
  type ConnectionState,
  type WAMessage,
  type WASocket,
} from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
import { NotFoundError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { SerialQueue } from '../../core/serial.js';
import { withTimeout } from '../../core/with-timeout.js';
import type { Table } from '../../core/store/table.js';
import type { AccountStatus, StatusReason } from '../../core/schemas/account.js';
import { waVersionText, type WaVersion } from '../../core/wa-version.js';
import type { WaVersionKeeper } from '../wa-version/wa-version-keeper.js';
import { loadDynamoAuthState, type DynamoAuthState } from '../auth/dynamo-auth-state.js';
import { Inbox } from '../inbound/inbox.js';
import { replayInbox } from '../inbound/inbox-replay.js';
import type { InboundContext } from '../inbound/pipeline.js';
import type { NetworkOptions } from '../network/network-options.js';
import { durableDecryption } from './durable-decrypt.js';
import { attachDispatcher, type Dispatcher, type InboundHandlers } from './event-dispatcher.js';
import { shouldSyncHistoryMessage } from './history-sync.js';
import { canMove, isWindingDown, statusOf, type Lifecycle } from './lifecycle.js';
import { publishQr, qrLifetimeMs, withdrawQr } from './qr-log.js';
import { forgetUnfinishedCodeLink, hasLinkedIdentity, LINK_PHASE_MS, logPairingCode } from './pairing-code.js';
import { closeReason, decideAfterClose } from './reconnect-policy.js';
import type { SessionEvents } from './session-events.js';
import type { AccountStatusWriter } from './status-writer.js';
import { StatusWaiters } from './status-waiters.js';
import { GroupMetadataCache } from './group-metadata.js';
import { GroupSubjects } from './group-subjects.js';
import { chatWriterOf } from '../../core/store/chat-writer.js';
import { sentContentOf, sentMessageLookup } from './sent-content.js';
import { boundLidMappingCache, socketCaches } from './socket-caches.js';

export interface AccountSessionDeps {
  accountId: string;
  collectionName: string;
  table: Table;
  network: NetworkOptions;
  logger: Logger;
  inbound: InboundHandlers;
  /** Where the terminal drawing of a QR goes (stdout in the process, nowhere in tests). */
  printTerminalQr: (text: string) => void;
  /** Called once when the session ends by itself (logged out, QR never scanned, account gone). */
  onEnded: (accountId: string, why: SessionEndReason) => void;
  /** Where each new QR goes as a webhook event. */
  events: SessionEvents;
  /** Logs, emits and writes each change of the account's status. */
  statusWriter: AccountStatusWriter;
  /** The account's status when the session was made: the `previousStatus` of its first change. */
  recordedStatus: AccountStatus;
  /** The WhatsApp Web version each socket announces, and a newer one after WhatsApp refused it. */
  waVersion: Pick<WaVersionKeeper, 'current' | 'newerThan'>;
}

/** The status a stopped session leaves on the account, and why. */
export interface FinalStatus {
  status: AccountStatus;
  reason: StatusReason;
}

/** See `AccountSession.sendHandle`. */
export interface SendHandle {
  sock: WASocket;
  /** The socket's group metadata (Baileys' cachedGroupMetadata): group operations keep it current. */
  groupMetadata: GroupMetadataCache;
  noteOwnSend(messageId: string): void;
  storeContext: InboundContext | undefined;
  /**
   * A sent message encoded for its outbound record (sent-content.ts). Here rather than imported
   * by the send handlers: encoding needs Baileys' protobufs, which only the session code loads.
   */
  contentToKeep(sent: WAMessage): Uint8Array | undefined;
}

export type SessionEndReason = 'logged_out' | 'qr_not_scanned' | 'account_deleted';

/** Why a session is being started: a user asked (`connect`) or it picks up where it was (`resume`). */
export type StartReason = 'connect' | 'resume';

/** Where a session stands for linking by code: its socket waits for a link, or the device is linked already. */
export type LinkPhase = 'awaiting_link' | 'linked' | 'not_ready';

/** Bound on waiting for Baileys to close: `sock.end()` can hang on a dead WebSocket. */
const STOP_TIMEOUT_MS = 3_000;
/** Bound on finishing the storage of messages received before a stop. */
const DRAIN_TIMEOUT_MS = 15_000;
/** How often a connected session replays write-ahead records left behind (besides at each login). */
const INBOX_REPLAY_EVERY_MS = 5 * 60_000;
const OWN_SENDS_LIMIT = 5_000;
const OWN_SENDS_TTL_MS = 10 * 60_000;
/** While WhatsApp keeps refusing the version and no newer one is found, one warn line per account this often. */
const VERSION_REFUSED_WARN_EVERY_MS = 60 * 60_000;

const closeCodeOf = (update: Partial<ConnectionState>): number | undefined => {
  const error = update.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined;
  return error?.output?.statusCode;
};

/**
 * One WhatsApp login of one account: owns the socket's lifecycle only. Where it stands is one
 * `Lifecycle` (lifecycle.ts), changed only by `move`, which also writes the account's status,
 * logs it and emits its `session.status` event; what to do after a close is `decideAfterClose`;
 * messages go to the inbound pipeline through the dispatcher; sending is done by command
 * handlers on `socket`.
 */
export class AccountSession {
  readonly accountId: string;
  private readonly deps: AccountSessionDeps;
  private readonly log: Logger;
  private lifecycle: Lifecycle = 'idle';
  /** The status and QR flag last written for the account: only `move` sets them. */
  private currentStatus: AccountStatus;
  private currentHasQr = false;
  private sock: WASocket | undefined;
  private dispatcher: Dispatcher | undefined;
  private auth: DynamoAuthState | undefined;
  private failures = 0;
  private qrRounds = 0;
  /** The version the current socket announced. */
  private announcedVersion: WaVersion | undefined;
  /** Logins refused for their version since the last one that succeeded. */
  private refusedLogins = 0;
  private lastVersionWarnAt = Number.NEGATIVE_INFINITY;
  /** When the current socket showed its first QR: the start of its link phase. */
  private linkPhaseStartedAt: number | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly statusWrites = new SerialQueue();
  private readonly statusWaiters = new StatusWaiters();
  /**
   * Message ids sent by commands in the last 10 minutes, so Baileys' echo of them (which comes
   * within seconds) is not stored twice; the most recent OWN_SENDS_LIMIT at most.
   */
  private readonly ownSends = new BoundedCache<string, true>('own-sends', OWN_SENDS_LIMIT, OWN_SENDS_TTL_MS);
  /** Baileys' per-socket caches, bounded (socket-caches.ts); kept across reconnects. */
  private readonly socketCaches = socketCaches();
  /** Decrypted messages are written here before their receipt (durable-decrypt.ts). */
  private readonly inbox: Inbox;
  /** Baileys' `getMessage`: a message this account sent, asked for again by its recipient (sent-content.ts). */
  private readonly sentMessages: ReturnType<typeof sentMessageLookup>;
  /** Names the account's group chats. */
  private readonly groupSubjects: GroupSubjects;
  /** Group participants for sends, so that a send to a group does not ask WhatsApp for them each time. */
  private readonly groupMetadata = new GroupMetadataCache();
  private replayTimer: NodeJS.Timeout | undefined;

  constructor(deps: AccountSessionDeps) {
    this.deps = deps;
    this.accountId = deps.accountId;
    this.currentStatus = deps.recordedStatus;
    this.log = deps.logger.child({ accountId: deps.accountId });
    this.inbox = new Inbox(deps.table, deps.accountId, this.log);
    this.sentMessages = sentMessageLookup(deps.table, deps.accountId, this.log);
    this.groupSubjects = new GroupSubjects(deps.table, deps.accountId, this.log);
    // The account may have been another connector's since this process last wrote its chats.
    chatWriterOf(deps.table).forgetAccount(deps.accountId);
  }

  get status(): AccountStatus {
    return this.currentStatus;
  }

  /** The socket while the session is `connected`, otherwise undefined. */
  get socket(): WASocket | undefined {
    return this.serving() ? this.sock : undefined;
  }

  /** Connected, and still serving commands (a halted session serves those in flight). */
  private serving(): boolean {
    return this.currentStatus === 'connected' && (this.lifecycle === 'connected' || this.lifecycle === 'halted');
  }

  /** Stopped or logged out: nothing happens on this session any more. */
  private ended(): boolean {
    return this.lifecycle === 'stopped' || this.lifecycle === 'logged_out';
  }

  get selfJid(): string | undefined {
    const id = this.sock?.user?.id ?? this.auth?.state.creds.me?.id;
    return id ? jidNormalizedUser(id) : undefined;
  }

  async start(reason: StartReason): Promise<void> {
    this.auth = await loadDynamoAuthState(this.deps.table, this.deps.collectionName, this.log);
    await this.dropUnfinishedCodeLink(this.auth);
    const linked = this.auth.isLinked();
    this.log.info({ reason, linked }, linked ? 'session resuming with saved credentials' : 'session starting: QR expected');
    // A resume after a connector died changes a `connected` account: its connection was lost.
    if (this.lifecycle === 'idle')
      await this.move(reason === 'resume' && linked ? 'reconnecting' : 'connecting', { reason: 'connection_lost' });
    clearInterval(this.replayTimer);
    this.replayTimer = setInterval(() => {
      if (this.ended()) clearInterval(this.replayTimer);
      else if (this.lifecycle === 'connected') this.replayInbox();
    }, INBOX_REPLAY_EVERY_MS);
    this.replayTimer.unref();
    this.openSocket();
  }

  /**
   * First step of a shutdown: no socket is opened again (a pending reconnect is cancelled, a
   * close is not followed by a reconnect), while a live socket keeps serving the commands still
   * in flight. Sends waiting for a reconnect fail at once. `stop()` follows.
   */
  haltReconnects(): void {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    if (!this.ended()) void this.move('halted');
  }

  /**
   * Closes the socket without logging out; the auth state stays. `final` is written when given
   * (disconnect: `not_started`, `stopped`); when omitted (lease lost) nothing is written,
   * because the status then belongs to whoever runs the account next. `leaseLost`: the creds are
   * not written a last time either, for the same reason.
   */
  async stop(final?: FinalStatus, { leaseLost = false }: { leaseLost?: boolean } = {}): Promise<void> {
    await this.move('stopped');
    clearTimeout(this.reconnectTimer);
    clearInterval(this.replayTimer);
    await this.closeSocket();
    // Before the caller releases the lease: what this session wrote is stored, and it writes no more.
    await this.auth?.close({ saveCreds: !leaseLost }).catch((error: unknown) => this.log.error({ err: error }, 'creds write failed'));
    if (final) await this.move('stopped', final);
    await this.statusWrites.drained();
  }

  /** Unlinks this device from the phone (best effort, bounded), then stops. Used before deletion. */
  async logoutAndStop(): Promise<void> {
    const sock = this.socket;
    await this.move('stopped');
    clearTimeout(this.reconnectTimer);
    clearInterval(this.replayTimer);
    if (sock) {
      const result = await withTimeout(
        sock.logout('account deleted').catch((error: unknown) => this.log.warn({ err: error }, 'logout failed')),
        STOP_TIMEOUT_MS,
      );
      if (result === 'timed_out') this.log.warn('logout timed out');
    }
    await this.closeSocket();
    // The account's data is deleted next: a key write landing after it would leave keys behind.
    await this.auth?.close({ saveCreds: false }).catch(() => undefined);
    await this.statusWrites.drained();
  }

  /** Writes the live status again (a `connect` on a running session was recorded as `connecting`). */
  republishStatus(): Promise<void> {
    return this.move(this.lifecycle, { status: this.currentStatus });
  }

  /** Resolves true once `connected`, false when `timeoutMs` passes or the session stops first. */
  private waitForConnected(timeoutMs: number): Promise<boolean> {
    const connected = () => (this.serving() ? true : isWindingDown(this.lifecycle) ? false : undefined);
    return this.statusWaiters.until(connected, timeoutMs, false);
  }

  /**
   * Resolves once the socket waits for a link (it showed a QR: a pairing code can be asked for
   * on it), `linked` when the device is linked already, `not_ready` when neither happened within
   * `timeoutMs` or the session stopped.
   */
  awaitLinkPhase(timeoutMs: number): Promise<LinkPhase> {
    const phase = (): LinkPhase | undefined => {
      if (this.lifecycle === 'connected' || (this.auth && hasLinkedIdentity(this.auth.state.creds))) return 'linked';
      if (isWindingDown(this.lifecycle)) return 'not_ready';
      if (this.sock?.ws.isOpen && this.lifecycle === 'awaiting_scan') return 'awaiting_link';
      return undefined;
    };
    return this.statusWaiters.until(phase, timeoutMs, 'not_ready');
  }

  /**
   * Asks WhatsApp for the 8-character code that links this account when entered on the phone of
   * `phoneNumber` (digits with country code), on the socket waiting for a link (`awaitLinkPhase`).
   * The code works until that socket's link phase ends (`expiresAt`, Unix ms); it is logged.
   */
  async requestPairingCode(phoneNumber: string): Promise<{ code: string; expiresAt: number }> {
    const sock = this.sock;
    if (!sock?.ws.isOpen || this.lifecycle !== 'awaiting_scan') throw new Error('the socket is not waiting for a link');
    const code = await sock.requestPairingCode(phoneNumber);
    const expiresAt = Math.max(Date.now(), (this.linkPhaseStartedAt ?? Date.now()) + LINK_PHASE_MS);
    logPairingCode(this.log, code, expiresAt);
    return { code, expiresAt };
  }

  private async dropUnfinishedCodeLink(auth: DynamoAuthState): Promise<void> {
    if (!forgetUnfinishedCodeLink(auth.state.creds)) return;
    this.log.info('pairing code was not entered: the next socket registers afresh');
    await auth.saveCreds().catch((error: unknown) => this.log.error({ err: error }, 'creds write failed'));
  }

  /**
   * What a command needs to send on this session, once it is `connected` (waiting until
   * `deadline`, Unix ms, for a reconnect): the socket, a way to mark the id it sends as its own
   * (Baileys' echo of it is then not stored twice), and the inbound context to store what it
   * sent. The status instead when the session did not connect in time.
   */
  async sendHandle(deadline: number): Promise<SendHandle | { notConnected: AccountStatus }> {
    const connected = await this.waitForConnected(Math.max(0, deadline - Date.now()));
    const sock = this.socket;
    if (!connected || !sock) return { notConnected: this.currentStatus };
    return {
      sock,
      groupMetadata: this.groupMetadata,
      noteOwnSend: (messageId) => this.noteOwnSend(messageId),
      storeContext: this.contextFor(sock),
      contentToKeep: sentContentOf,
    };
  }

  /** Remembers an id a command is about to send (see `ownSends`). */
  private noteOwnSend(messageId: string): void {
    this.ownSends.set(messageId, true);
  }

  private contextFor(sock: WASocket): InboundContext | undefined {
    const selfJid = this.selfJid;
    if (!selfJid) return undefined;
    const dispatcher = this.deps.network.downloadDispatcher;
    return {
      selfJid,
      download: (message: WAMessage): Promise<Readable> =>
        downloadMediaMessage(message, 'stream', dispatcher ? { options: { dispatcher } } : {}, {
          logger: this.log,
          reuploadRequest: sock.updateMediaMessage,
        }),
      groupSubject: (groupJid) => this.groupSubjects.subjectOf((jid) => this.groupMetadata.metadataOf(sock, jid), groupJid),
      writeAhead: (messageId) => (this.inbox.holds(messageId) ? 'live' : undefined),
    };
  }

  private openSocket(): void {
    const auth = this.auth;
    if (!auth || isWindingDown(this.lifecycle)) return;
    this.linkPhaseStartedAt = undefined;
    const durable = durableDecryption((part) => this.inbox.record(part));
    const version = this.deps.waVersion.current().version;
    this.announcedVersion = version;
    const sock = makeWASocket({
      ...this.deps.network.socket,
      ...this.socketCaches,
      version: [...version],
      auth: auth.state,
      logger: this.log.child({ component: 'baileys' }, { level: this.log.isLevelEnabled('debug') ? 'debug' : 'warn' }),
      browser: Browsers.ubuntu('Chrome'),
      markOnlineOnConnect: false,
      syncFullHistory: false,
      shouldSyncHistoryMessage,
      generateHighQualityLinkPreview: false,
      makeSignalRepository: durable.makeSignalRepository,
      cachedGroupMetadata: (groupJid) => this.groupMetadata.metadataOf(sock, groupJid),
      getMessage: this.sentMessages,
    });
    durable.watch(sock.ws);
    if (!boundLidMappingCache(sock)) this.log.warn('Baileys LID mapping cache not found: it stays unbounded');
    this.groupSubjects.watch(sock);
    this.groupMetadata.clear();
    this.groupMetadata.watch(sock);
    const previous = this.dispatcher;
    this.sock = sock;
    this.dispatcher = attachDispatcher(sock, {
      accountId: this.accountId,
      groupMetadata: (groupJid) => this.groupMetadata.metadataOf(sock, groupJid),
      logger: this.log,
      inbound: this.deps.inbound,
      inboundContext: () => this.contextFor(sock),
      isOwnCommandSend: (id) => this.ownSends.has(id),
      inbox: this.inbox,
      // The previous socket's messages first: per-account order holds across a reconnect.
      ...(previous ? { after: withTimeout(previous.drained(), DRAIN_TIMEOUT_MS) } : {}),
      onConnectionUpdate: (update) => {
        if (this.sock === sock) void this.onConnectionUpdate(update);
      },
      onCredsUpdate: () => {
        auth.saveCreds().catch((error: unknown) => this.log.error({ err: error }, 'creds write failed'));
      },
    });
  }

  /**
   * Queues a replay of the write-ahead records no handling is waiting for (a previous process
   * died after receipting them, or storing them failed) behind the socket's inbound events.
   */
  private replayInbox(): void {
    const dispatcher = this.dispatcher;
    const me = this.auth?.state.creds.me;
    if (!dispatcher || !me) return;
    dispatcher.run('write-ahead replay', async (ctx) => {
      await replayInbox({
        accountId: this.accountId,
        inbox: this.inbox,
        me: { id: me.id, lid: me.lid },
        logger: this.log,
        // Each replayed message's records are deleted only after its handling.
        handleUpsert: (upsert) => this.deps.inbound.handleUpsert(this.accountId, upsert, { ...ctx, writeAhead: () => 'replay' }),
      });
    });
  }

  private async onConnectionUpdate(update: Partial<ConnectionState>): Promise<void> {
    if (update.qr && canMove(this.lifecycle, 'awaiting_scan')) {
      const first = this.lifecycle !== 'awaiting_scan';
      this.linkPhaseStartedAt ??= Date.now();
      await this.move('awaiting_scan');
      const timestamp = Date.now();
      const lifetimeMs = qrLifetimeMs(first, this.deps.network.socket.qrTimeout);
      const expiresAt = await publishQr(
        this.deps.table,
        this.log,
        this.accountId,
        update.qr,
        lifetimeMs,
        this.deps.printTerminalQr,
        timestamp,
      );
      this.deps.events.qr(this.accountId, { qr: update.qr, expiresAt, timestamp });
    }
    if (update.isNewLogin && !isWindingDown(this.lifecycle)) {
      this.log.info('QR scanned: device linked, restarting the connection to log in');
      await this.move('connecting');
    }
    // A socket that opens while the connector stops is not used: it is closed with the rest.
    if (update.connection === 'open' && canMove(this.lifecycle, 'connected')) {
      this.failures = 0;
      this.qrRounds = 0;
      this.refusedLogins = 0;
      this.log.info({ selfJid: this.selfJid }, 'connected to WhatsApp');
      this.replayInbox();
      await this.move('connected', { reason: 'connected' });
    }
    if (update.connection === 'close') await this.onClose(closeCodeOf(update));
  }

  private async onClose(statusCode: number | undefined): Promise<void> {
    this.detachSocket();
    if (this.ended()) return;
    const auth = this.auth;
    if (!auth) return;
    // Creds Baileys just changed (pairing, pre-keys) must be stored before the next login uses them.
    await auth.flush().catch((error: unknown) => this.log.error({ err: error }, 'creds write failed'));
    await this.dropUnfinishedCodeLink(auth);
    const linked = auth.isLinked();
    const decision = decideAfterClose({ statusCode, failures: this.failures, linked, qrRounds: this.qrRounds });
    const reason = closeReason(statusCode, linked);
    if (this.lifecycle === 'awaiting_scan') this.qrRounds += 1;
    this.log.info({ statusCode, decision: decision.kind, reason }, 'connection closed');
    if (
      this.lifecycle === 'halted' &&
      (decision.kind === 'restart_now' || decision.kind === 'retry_later' || decision.kind === 'version_refused')
    ) {
      this.log.info('not reconnecting: the connector is stopping');
      return;
    }
    switch (decision.kind) {
      case 'restart_now': {
        // A connected account is reconnecting meanwhile; a link in progress stays `connecting`.
        const next = this.lifecycle === 'connected' ? 'reconnecting' : this.lifecycle === 'awaiting_scan' ? 'connecting' : this.lifecycle;
        if (next !== this.lifecycle) await this.move(next, { reason });
        this.openSocket();
        return;
      }
      case 'retry_later':
        this.failures += 1;
        await this.move(linked ? 'reconnecting' : 'connecting', { reason });
        // The status write above may have overlapped haltReconnects().
        if (isWindingDown(this.lifecycle)) return;
        this.reconnectTimer = setTimeout(() => this.openSocket(), decision.delayMs);
        this.log.info({ delayMs: decision.delayMs }, 'reconnect scheduled');
        return;
      case 'logged_out':
        await auth.clear().catch((error: unknown) => this.log.error({ err: error }, 'clearing credentials failed'));
        await this.move('logged_out', { reason });
        this.log.warn({ reason }, 'logged out by the phone: credentials cleared, connect to link again');
        this.deps.onEnded(this.accountId, 'logged_out');
        return;
      case 'version_refused':
        await this.loginAgainAfterRefusal(linked, reason, decision.delayMs);
        return;
      case 'give_up_qr':
        await this.move('stopped', { reason: 'qr_timeout', status: 'not_started' });
        this.log.warn('QR was not scanned in time: connect again for a new QR');
        this.deps.onEnded(this.accountId, 'qr_not_scanned');
        return;
    }
  }

  /**
   * WhatsApp refused the announced version (405, `client_too_old`). Reported on the account (event
   * and `lastDisconnect`) for the first refusal of a run even when the status stays
   * `reconnecting`; then the login is tried again at once with a newer version when the keeper
   * finds one, else after `delayMs` (the drop backoff), with one warn line an hour.
   */
  private async loginAgainAfterRefusal(linked: boolean, reason: StatusReason, delayMs: number): Promise<void> {
    this.refusedLogins += 1;
    this.failures += 1;
    const refused = this.announcedVersion ?? this.deps.waVersion.current().version;
    await this.move(linked ? 'reconnecting' : 'connecting', { reason, report: this.refusedLogins === 1 });
    const newer = await this.deps.waVersion.newerThan(refused);
    if (isWindingDown(this.lifecycle)) return;
    if (newer) {
      this.log.info(
        { refused: waVersionText(refused), version: waVersionText(newer) },
        'WhatsApp refused the version: logging in with a newer one',
      );
      this.openSocket();
      return;
    }
    const at = Date.now();
    const line = { refused: waVersionText(refused), refusedLogins: this.refusedLogins, delayMs };
    if (at - this.lastVersionWarnAt >= VERSION_REFUSED_WARN_EVERY_MS) {
      this.lastVersionWarnAt = at;
      this.log.warn(line, 'WhatsApp refuses the version and no newer one is found: retrying (docs/connector.md, "When WhatsApp moves")');
    } else this.log.info(line, 'WhatsApp refused the version again: retrying');
    this.reconnectTimer = setTimeout(() => this.openSocket(), delayMs);
  }

  /**
   * The single place the session moves, and so the single place its account's status changes:
   * the move is checked against lifecycle.ts, the status kept in memory, announced through the
   * connector's status writer (logged, one `session.status` event when it changed, with
   * `lastDisconnect` when the reason is a disconnect) and written to the store in order. `status`
   * is for the lifecycles that keep the status they had (`stopped`, `halted`): written when
   * given. `report`: event and `lastDisconnect` even when the status stays (a refused version).
   */
  private move(next: Lifecycle, change: { reason?: StatusReason; status?: AccountStatus; report?: boolean } = {}): Promise<void> {
    if (!canMove(this.lifecycle, next)) {
      this.log.warn({ from: this.lifecycle, to: next }, 'session move refused');
      return Promise.resolve();
    }
    this.lifecycle = next;
    const target =
      statusOf(next) ??
      (change.status ? { status: change.status, hasQR: change.status === this.currentStatus && this.currentHasQr } : undefined);
    if (!target) {
      this.notifyStatus();
      return Promise.resolve();
    }
    const { status, hasQR } = target;
    // A stop without a status (lease lost, shutdown) leaves the QR to expire: the account's next owner may show its own.
    const qrWithdrawn = this.currentHasQr && !hasQR;
    const write = this.deps.statusWriter.announce({
      accountId: this.accountId,
      status,
      previousStatus: this.currentStatus,
      hasQR,
      ...(change.reason ? { reason: change.reason } : {}),
      ...(change.report ? { report: true } : {}),
    });
    this.currentStatus = status;
    this.currentHasQr = hasQR;
    this.notifyStatus();
    return this.statusWrites.run(async () => {
      try {
        await this.deps.statusWriter.write(this.accountId, write);
        if (qrWithdrawn) await withdrawQr(this.deps.table, this.log, this.accountId);
      } catch (error) {
        if (error instanceof NotFoundError) {
          if (!this.ended()) {
            this.log.warn('account record is gone: closing the session');
            void this.move('stopped');
            clearTimeout(this.reconnectTimer);
            void this.closeSocket();
            this.deps.onEnded(this.accountId, 'account_deleted');
          }
          return;
        }
        this.log.error({ err: error, status }, 'status write failed');
      }
    });
  }

  private notifyStatus(): void {
    this.statusWaiters.notify();
  }

  private detachSocket(): void {
    this.dispatcher?.detach();
  }

  private async closeSocket(): Promise<void> {
    const sock = this.sock;
    const dispatcher = this.dispatcher;
    this.sock = undefined;
    this.dispatcher = undefined;
    dispatcher?.detach();
    if (!sock) return;
    const result = await withTimeout(
      sock.end(undefined).catch((error: unknown) => this.log.warn({ err: error }, 'socket end failed')),
      STOP_TIMEOUT_MS,
    );
    if (result === 'timed_out') {
      this.log.warn('socket did not close in time: dropping it');
      sock.ws.close();
    }
    // Messages the network already delivered are stored before the session reports it stopped.
    if ((await withTimeout(dispatcher?.drained() ?? Promise.resolve(), DRAIN_TIMEOUT_MS)) === 'timed_out') {
      this.log.warn('inbound messages still being stored after the socket closed');
    }
    await this.inbox.drained();
  }
}
