import { jidNormalizedUser, type ConnectionState, type WAMessage, type WASocket } from '@whiskeysockets/baileys';
import { HistoryImport } from '../history/history-import.js';
import type { Logger } from '../../core/logger.js';
import { SerialQueue } from '../../core/serial.js';
import { withTimeout } from '../../core/with-timeout.js';
import type { Table } from '../../core/store/table.js';
import type { AccountStatus, StatusReason } from '../../core/schemas/account.js';
import type { WaVersion } from '../../core/wa-version.js';
import type { WaVersionKeeper } from '../wa-version/wa-version-keeper.js';
import { loadDynamoAuthState, type DynamoAuthState } from '../auth/dynamo-auth-state.js';
import { Inbox } from '../inbound/inbox.js';
import type { InboundContext } from '../inbound/pipeline.js';
import type { NetworkOptions } from '../network/network-options.js';
import { afterClose, closeCodeOf, loggedIn, loginTries, type ClosingSession } from './after-close.js';
import { attachDispatcher, type Dispatcher, type InboundHandlers } from './event-dispatcher.js';
import { canMove, isWindingDown, type Lifecycle } from './lifecycle.js';
import { maskProxyUrl, type AccountSettings } from '../../core/schemas/settings.js';
import { networkThrough } from '../network/account-proxy.js';
import { callHandler } from './calls.js';
import { dropUnfinishedCodeLink, linkPhaseOf, requestPairingCode, showQr, type LinkPhase, type QrTargets } from './link-phase.js';
import { moveTarget, storeMove, type StatusStore } from './status-move.js';
import type { SessionEvents } from './session-events.js';
import type { AccountStatusWriter } from './status-writer.js';
import { StatusWaiters } from './status-waiters.js';
import { GroupMetadataCache } from './group-metadata.js';
import { ContactBook } from './contact-book.js';
import { GroupSubjects } from './group-subjects.js';
import { chatWriterOf } from '../../core/store/chat-writer.js';
import { writeLinkedAt } from '../../core/store/accounts.js';
import { inboundContextOf, ownSendsCache, sendHandleOf, type ContextParts, type SendHandle } from './send-handle.js';
import { sentMessageLookup } from './sent-content.js';
import { socketCaches } from './socket-caches.js';
import { DRAIN_TIMEOUT_MS, endSocket, logOutBounded, openWASocket, type SocketParts } from './wa-socket.js';
import { INBOX_REPLAY_EVERY_MS, queueInboxReplay, type ReplayParts } from './write-ahead-replay.js';

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
  /** The account's settings when the session was made; `applySettings` brings changes. */
  settings: AccountSettings;
  /** Whether the account's sending is paused now (WhatsApp refused a send); none: never paused. */
  sendingPaused?: () => boolean;
  /** When the device was linked, as stored (absent: linked before it was recorded). */
  linkedAt?: number | undefined;
}

/** The status a stopped session leaves on the account, and why. */
export interface FinalStatus {
  status: AccountStatus;
  reason: StatusReason;
}

export type SessionEndReason = 'logged_out' | 'qr_not_scanned' | 'account_deleted';

/** Why a session is being started: a user asked (`connect`) or it picks up where it was (`resume`). */
export type StartReason = 'connect' | 'resume';

/** The session's parts that outlive its sockets, as the functions it composes take them. */
type SessionParts = Omit<SocketParts, 'auth'> & ContextParts & ReplayParts & QrTargets & StatusStore;

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
  /** The version the current socket announced. */
  private announcedVersion: WaVersion | undefined;
  /** When the current socket showed its first QR: the start of its link phase. */
  private linkPhaseStartedAt: number | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly statusWrites = new SerialQueue();
  private readonly statusWaiters = new StatusWaiters();
  /** See `ownSendsCache` (send-handle.ts). */
  private readonly ownSends = ownSendsCache();
  private replayTimer: NodeJS.Timeout | undefined;
  /** What opens a socket, makes its inbound context, replays the inbox, shows a QR and stores the status. */
  private readonly parts: SessionParts;
  /** This session as `afterClose` (after-close.ts) sees it. */
  private readonly closing: ClosingSession;
  /** The account's settings now: read where they apply (the inbound context, calls), so a change applies to what comes next. */
  private settings: AccountSettings;
  /** When the device was linked: the warm-up of paced sends counts from it (connector/pacing/). */
  private linkedAtMs: number | undefined;
  private readonly onCalls: ReturnType<typeof callHandler>;
  /** The phone's history, imported chunk by chunk beside the inbound queue (connector/history/). */
  private readonly history: HistoryImport;
  /**
   * The current socket's network: the proxy of the settings when it was opened (a new proxy
   * applies from the next socket: a connected one is not cut for it), and the agents to close
   * with it.
   */
  private socketNetwork: ReturnType<typeof networkThrough>;

  constructor(deps: AccountSessionDeps) {
    this.deps = deps;
    this.accountId = deps.accountId;
    this.currentStatus = deps.recordedStatus;
    this.settings = deps.settings;
    this.linkedAtMs = deps.linkedAt;
    this.socketNetwork = { network: deps.network };
    this.log = deps.logger.child({ accountId: deps.accountId });
    const { accountId, table, network, waVersion, inbound, events, printTerminalQr, statusWriter } = deps;
    const log = this.log;
    this.parts = {
      accountId,
      table,
      network,
      log,
      waVersion,
      inbound,
      events,
      printTerminalQr,
      statusWriter,
      caches: socketCaches(),
      groupMetadata: new GroupMetadataCache(),
      inbox: new Inbox(table, accountId, log),
      sentMessages: sentMessageLookup(table, accountId, log),
      groupSubjects: new GroupSubjects(table, accountId, log),
      contacts: new ContactBook({ table, accountId, logger: log }),
      settings: () => this.settings,
      importHistory: (message) => this.importHistory(message),
      importingHistory: (messageId) => this.history.has(messageId),
    };
    this.history = new HistoryImport({
      accountId,
      table,
      log,
      settings: () => this.settings,
      contacts: this.parts.contacts,
      events,
      dispatcher: network.downloadDispatcher,
    });
    this.onCalls = callHandler({
      accountId,
      log,
      events,
      settings: () => this.settings,
      sendingPaused: deps.sendingPaused ?? (() => false),
    });
    // The account may have been another connector's since this process last wrote its chats.
    chatWriterOf(deps.table).forgetAccount(deps.accountId);
    this.closing = {
      log,
      tries: loginTries(),
      lifecycle: () => this.lifecycle,
      move: (next, change) => this.move(next, change),
      openSocket: () => this.openSocket(),
      openSocketLater: (delayMs) => {
        this.reconnectTimer = setTimeout(() => this.openSocket(), delayMs);
      },
      ended: (why) => deps.onEnded(deps.accountId, why),
      announcedVersion: () => this.announcedVersion,
      waVersion: deps.waVersion,
    };
  }

  get status(): AccountStatus {
    return this.currentStatus;
  }

  /** The account's settings now (the pacer reads `sendPolicy` before each send). */
  get currentSettings(): AccountSettings {
    return this.settings;
  }

  get linkedAt(): number | undefined {
    return this.linkedAtMs;
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
    await dropUnfinishedCodeLink(this.auth, this.log);
    const linked = this.auth.isLinked();
    this.log.info({ reason, linked }, linked ? 'session resuming with saved credentials' : 'session starting: QR expected');
    // A resume after a connector died changes a `connected` account: its connection was lost.
    if (this.lifecycle === 'idle')
      await this.move(reason === 'resume' && linked ? 'reconnecting' : 'connecting', { reason: 'connection_lost' });
    clearInterval(this.replayTimer);
    this.replayTimer = setInterval(() => {
      if (this.ended()) clearInterval(this.replayTimer);
      else if (this.lifecycle === 'connected') this.replayInbox(false);
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
    await withTimeout(this.history.close(), DRAIN_TIMEOUT_MS);
    // Not awaited: a hand-over waits for nothing of it (left, the item is replayed once by the next owner).
    void this.deps.inbound.accountLeft(this.accountId).catch((error: unknown) => this.log.warn({ err: error }, 'event outbox not tidied'));
    // Before the caller releases the lease: what this session wrote is stored, and it writes no more.
    this.parts.inbox.close();
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
    if (sock) await logOutBounded(sock, this.log);
    await this.closeSocket();
    await withTimeout(this.history.close(), DRAIN_TIMEOUT_MS);
    void this.deps.inbound.accountLeft(this.accountId).catch(() => undefined);
    // The account's data is deleted next: a key or record write landing after it would stay behind.
    this.parts.inbox.close();
    await this.auth?.close({ saveCreds: false }).catch(() => undefined);
    await this.statusWrites.drained();
  }

  /**
   * The account's settings changed (SessionRegistry.refreshSettings): they apply from now on,
   * to this socket's next message and call. Which fields changed is logged, never their values
   * (a proxy URL may carry a password).
   */
  applySettings(settings: AccountSettings): void {
    const changed = (Object.keys(settings) as (keyof AccountSettings)[]).filter(
      (key) => JSON.stringify(settings[key]) !== JSON.stringify(this.settings[key]),
    );
    this.settings = settings;
    this.log.info({ changed }, 'account settings applied');
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
    const phase = () => linkPhaseOf(this.lifecycle, this.auth, this.sock);
    return this.statusWaiters.until(phase, timeoutMs, 'not_ready');
  }

  /**
   * Asks WhatsApp for the 8-character code that links this account when entered on the phone of
   * `phoneNumber` (digits with country code), on the socket waiting for a link (`awaitLinkPhase`).
   * The code works until that socket's link phase ends (`expiresAt`, Unix ms); it is logged.
   */
  requestPairingCode(phoneNumber: string): Promise<{ code: string; expiresAt: number }> {
    return requestPairingCode(this.sock, this.lifecycle, this.linkPhaseStartedAt, phoneNumber, this.log);
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
    return sendHandleOf(sock, this.parts.groupMetadata, this.ownSends, this.contextFor(sock));
  }

  private contextFor(sock: WASocket): InboundContext | undefined {
    return inboundContextOf(sock, this.selfJid, { ...this.parts, network: this.socketNetwork.network });
  }

  private openSocket(): void {
    const auth = this.auth;
    if (!auth || isWindingDown(this.lifecycle)) return;
    this.linkPhaseStartedAt = undefined;
    this.socketNetwork.proxy?.close();
    const proxyUrl = this.settings.proxy?.url;
    this.socketNetwork = networkThrough(this.parts.network, proxyUrl);
    // The URL as the API answers it: never the password.
    if (proxyUrl !== undefined) this.log.info({ proxy: maskProxyUrl(proxyUrl) }, 'connecting through the proxy');
    const { sock, version } = openWASocket({ ...this.parts, network: this.socketNetwork.network, auth });
    this.announcedVersion = version;
    const previous = this.dispatcher;
    this.sock = sock;
    this.dispatcher = attachDispatcher(sock, {
      accountId: this.accountId,
      groupMetadata: (groupJid) => this.parts.groupMetadata.metadataOf(sock, groupJid),
      logger: this.log,
      inbound: this.deps.inbound,
      inboundContext: () => this.contextFor(sock),
      isOwnCommandSend: (id) => this.ownSends.has(id),
      inbox: this.parts.inbox,
      // The previous socket's messages first: per-account order holds across a reconnect.
      ...(previous ? { after: withTimeout(previous.drained(), DRAIN_TIMEOUT_MS) } : {}),
      onConnectionUpdate: (update) => {
        if (this.sock === sock) void this.onConnectionUpdate(update);
      },
      onCalls: (calls) => {
        if (this.sock === sock) this.onCalls(sock, calls);
      },
      onContacts: (contacts) => void this.parts.contacts.learn(contacts),
      onHistory: (message) => {
        const id = message.key.id;
        const imported = id && this.sock === sock ? this.importHistory(message) : undefined;
        if (!id || !imported) return false;
        imported.then(
          () => this.parts.inbox.retire(id),
          (error: unknown) => {
            this.log.error({ err: error, messageId: id }, 'history chunk not imported: left to the write-ahead replay');
            this.parts.inbox.release(id);
          },
        );
        return true;
      },
      onCredsUpdate: () => {
        auth.saveCreds().catch((error: unknown) => this.log.error({ err: error }, 'creds write failed'));
      },
    });
  }

  /** The import of the history chunk `message` announces; undefined when it announces none or the socket is gone. */
  private importHistory(message: WAMessage): Promise<void> | undefined {
    const sock = this.sock;
    const selfJid = this.selfJid;
    if (!sock || !selfJid || !HistoryImport.handles(message)) return undefined;
    return this.history.run(sock, message, selfJid);
  }

  /** Queues a replay of the write-ahead records and outbox items left behind (write-ahead-replay.ts). */
  private replayInbox(atLogin: boolean): void {
    queueInboxReplay(this.dispatcher, this.auth?.state.creds.me, this.parts, { atLogin });
  }

  private async onConnectionUpdate(update: Partial<ConnectionState>): Promise<void> {
    if (update.qr && canMove(this.lifecycle, 'awaiting_scan')) {
      const first = this.lifecycle !== 'awaiting_scan';
      this.linkPhaseStartedAt ??= Date.now();
      await this.move('awaiting_scan');
      await showQr(this.parts, update.qr, first);
    }
    if (update.isNewLogin && !isWindingDown(this.lifecycle)) {
      this.log.info('QR scanned: device linked, restarting the connection to log in');
      this.linkedAtMs = Date.now();
      await writeLinkedAt(this.deps.table, this.accountId, this.linkedAtMs).catch((error: unknown) =>
        this.log.error({ err: error }, 'storing the link time failed; the warm-up counts from the session start'),
      );
      await this.move('connecting');
    }
    // A socket that opens while the connector stops is not used: it is closed with the rest.
    if (update.connection === 'open' && canMove(this.lifecycle, 'connected')) {
      loggedIn(this.closing.tries);
      this.log.info({ selfJid: this.selfJid }, 'connected to WhatsApp');
      this.replayInbox(true);
      await this.move('connected', { reason: 'connected' });
    }
    if (update.connection === 'close') await this.onClose(closeCodeOf(update));
  }

  private async onClose(statusCode: number | undefined): Promise<void> {
    this.detachSocket();
    if (this.ended()) return;
    const auth = this.auth;
    if (!auth) return;
    await afterClose(this.closing, auth, statusCode, this.socketNetwork.proxy?.failure());
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
    const target = moveTarget(next, change.status, { status: this.currentStatus, hasQR: this.currentHasQr });
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
    return this.statusWrites.run(() =>
      storeMove(this.parts, write, qrWithdrawn, () => {
        if (this.ended()) return;
        this.log.warn('account record is gone: closing the session');
        void this.move('stopped');
        clearTimeout(this.reconnectTimer);
        void this.closeSocket();
        this.deps.onEnded(this.accountId, 'account_deleted');
      }),
    );
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
    await endSocket(sock, dispatcher, this.parts.inbox, this.log);
    this.socketNetwork.proxy?.close();
  }
}
