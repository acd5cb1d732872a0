import {
  DisconnectReason,
  getBinaryNodeChild,
  makeWASocket,
  type BaileysEventMap,
  type BinaryNode,
  type UserFacingSocketConfig,
  type WAMessage,
  type WAMessageUpdate,
  type WASocket,
} from '@whiskeysockets/baileys';
import { WebSocket } from 'ws';
import type { RunningSandbox, SandboxDescriptor } from '../../../sandbox/index.js';
import { sandboxSocketOptions } from '../../../sandbox/client.js';
import { type LogLine, logSink } from '../../support/log-sink.js';
import { waitFor } from '../../support/wait.js';
import { memoryAuthState, type MemoryAuthState } from './memory-auth.js';

/** A `<message>` stanza as it reached the client, before Baileys decrypted it. */
export interface RawMessage {
  id: string;
  offline: boolean;
  /** Which socket of this client got it (1 for the first `start()`, 2 for the next ...). */
  socket: number;
}

export interface ClientOptions {
  /** Reconnect after any close except logout or 403 (515 restarts are always followed). Default true. */
  autoReconnect?: boolean;
  auth?: MemoryAuthState;
  /** Baileys settings of every socket of the client, the first included (e.g. `syncFullHistory`). */
  socketConfig?: Partial<UserFacingSocketConfig>;
}

/**
 * One Baileys client against the sandbox, across reconnects: it keeps the auth state, every
 * received message and status update, every close code, and error-level log entries.
 */
export class SandboxClient {
  sock: WASocket | undefined;
  readonly auth: MemoryAuthState;
  readonly messages: WAMessage[] = [];
  /** How each message id arrived: 'notify' (live) or 'append' (offline backlog, history). */
  readonly upsertTypes = new Map<string, string>();
  readonly updates: WAMessageUpdate[] = [];
  readonly closeCodes: number[] = [];
  /** Error-level (and worse) log entries, so a test can assert there were none. */
  readonly errors: LogLine[] = [];
  /** When each message id's first stanza reached this client (Unix ms), in arrival order: pacing is measured here. */
  readonly receivedAt = new Map<string, number>();
  /** Every `<message>` stanza received, in arrival order. */
  readonly rawMessages: RawMessage[] = [];
  /** The count of each `<ib><offline count/></ib>` (end of an offline backlog), in order. */
  readonly offlineCounts: number[] = [];
  openCount = 0;
  socketCount = 0;
  /** Baileys settings of the sockets started from now on (e.g. `retryRequestDelayMs`). */
  socketConfig: Partial<UserFacingSocketConfig> = {};
  /** Sockets of a simulated crash: whatever they would still write to the auth state is lost. */
  private readonly crashed = new WeakSet<WASocket>();
  /** Hung sockets still open, ended by `stop()`. */
  private hung: WASocket[] = [];
  /** History sync payloads received (the phone's INITIAL_BOOTSTRAP after linking). */
  historySyncs = 0;
  /** What each processed history sync carried, in the order Baileys emitted them. */
  readonly histories: BaileysEventMap['messaging-history.set'][] = [];
  qr: string | undefined;
  private stopped = false;
  private readonly autoReconnect: boolean;

  constructor(
    private descriptor: SandboxDescriptor,
    options: ClientOptions = {},
  ) {
    this.auth = options.auth ?? memoryAuthState();
    this.autoReconnect = options.autoReconnect ?? true;
    this.socketConfig = options.socketConfig ?? {};
  }

  /**
   * Error-level log entries except Baileys' own report of a server stream error, which it logs
   * at error level for every expected restart (515 after pairing) and kick.
   */
  get unexpectedErrors(): LogLine[] {
    return this.errors.filter((e) => e.msg !== 'stream errored out');
  }

  get jid(): string {
    const id = this.auth.creds.me?.id;
    if (!id) throw new Error('client is not linked');
    return id;
  }

  /** The user JID (no device) of this client's account. */
  get userJid(): string {
    return this.jid.replace(/:\d+@/, '@');
  }

  /** Opens a socket (again), e.g. against a restarted sandbox with a new descriptor. */
  start(descriptor: SandboxDescriptor = this.descriptor): WASocket {
    this.descriptor = descriptor;
    this.stopped = false;
    const socket = ++this.socketCount;
    const keys = this.auth.keys;
    const sock: WASocket = makeWASocket({
      ...sandboxSocketOptions(descriptor),
      auth: {
        creds: this.auth.creds,
        keys: {
          get: (type, ids) => keys.get(type, ids),
          set: async (data) => {
            if (!this.crashed.has(sock)) await keys.set(data);
          },
        },
      },
      logger: logSink('error', { lines: this.errors }).logger,
      printQRInTerminal: false,
      markOnlineOnConnect: false,
      browser: ['Sandbox', 'Chrome', '1.0'],
      ...this.socketConfig,
    });
    this.sock = sock;
    sock.ev.on('creds.update', (update) => {
      if (!this.crashed.has(sock)) Object.assign(this.auth.creds, update);
    });
    sock.ws.on('CB:message', (node: BinaryNode) => {
      this.rawMessages.push({ id: node.attrs.id ?? '', offline: !!node.attrs.offline, socket });
      if (node.attrs.id && !this.receivedAt.has(node.attrs.id)) this.receivedAt.set(node.attrs.id, Date.now());
    });
    sock.ws.on('CB:ib,,offline', (node: BinaryNode) => {
      this.offlineCounts.push(Number(getBinaryNodeChild(node, 'offline')?.attrs.count ?? -1));
    });
    sock.ev.on('messages.upsert', ({ messages, type }) => {
      for (const m of messages) if (m.key.id) this.upsertTypes.set(m.key.id, type);
      this.messages.push(...messages);
    });
    sock.ev.on('messages.update', (updates) => this.updates.push(...updates));
    sock.ev.on('messaging-history.set', (history) => {
      this.historySyncs++;
      this.histories.push(history);
    });
    sock.ev.on('connection.update', ({ connection, qr, lastDisconnect }) => {
      if (qr) this.qr = qr;
      if (connection === 'open') this.openCount++;
      if (connection === 'close') {
        const code = (lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode ?? 0;
        this.closeCodes.push(code);
        if (this.sock !== sock || this.stopped) return;
        const restart = code === DisconnectReason.restartRequired;
        const loggedOut = code === DisconnectReason.loggedOut || code === DisconnectReason.forbidden;
        if (restart || (this.autoReconnect && !loggedOut)) this.start();
      }
    });
    return sock;
  }

  /** Resolves once the client has opened `count` times in total. */
  waitForOpen(count = this.openCount + 1, timeoutMs = 30_000): Promise<void> {
    return waitFor(`connection open #${count}`, () => this.openCount >= count, { timeoutMs }).then(() => undefined);
  }

  waitForMessage(predicate: (m: WAMessage) => boolean, what = 'a message', timeoutMs = 30_000): Promise<WAMessage> {
    return waitFor(what, () => this.messages.find(predicate), { timeoutMs });
  }

  /**
   * Resolves once a sent message reached `minStatus` (proto.WebMessageInfo.Status). Baileys
   * reports it as a messages.update, or, when the receipt arrived while its event buffer held
   * the message's own upsert, folded into that upsert's `status`.
   */
  waitForStatus(messageId: string, minStatus: number, timeoutMs = 30_000): Promise<number> {
    return waitFor(
      `status >= ${minStatus} for ${messageId}`,
      () => {
        const fromUpdates = this.updates.filter((u) => u.key.id === messageId).map((u) => u.update.status ?? 0);
        const fromUpserts = this.messages.filter((m) => m.key.id === messageId).map((m) => m.status ?? 0);
        const best = Math.max(0, ...fromUpdates, ...fromUpserts);
        return best >= minStatus ? best : undefined;
      },
      { timeoutMs },
    );
  }

  /**
   * Simulates the client's process dying as the first `<message>` stanza matching `predicate`
   * arrives, before Baileys handles it: nothing more it would store is kept, and its connection
   * closes (or, with `hang`, stays open while nothing it sends reaches the network) without
   * reconnecting. `start()` plays the restarted process.
   */
  crashOnMessage(predicate: (node: BinaryNode) => boolean, options: { hang?: boolean } = {}): void {
    const sock = this.sock;
    if (!sock) throw new Error('client is not started');
    sock.ws.on('CB:message', (node: BinaryNode) => {
      if (this.crashed.has(sock) || !predicate(node)) return;
      this.crashed.add(sock);
      this.stopped = true;
      this.sock = undefined;
      if (options.hang) {
        this.hung.push(sock);
        // Baileys captured WebSocketClient#send when it started: the frames are dropped one level
        // down, at the `ws` WebSocket it wraps, so the server never hears from this client again.
        const wire: unknown = Reflect.get(sock.ws, 'socket');
        if (!(wire instanceof WebSocket)) throw new Error('Baileys no longer wraps a ws WebSocket');
        wire.send = (_data: unknown, ...rest: unknown[]) => {
          rest.find((arg): arg is () => void => typeof arg === 'function')?.();
        };
      } else {
        void sock.ws.close();
      }
    });
  }

  /** Closes the socket without reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    const sock = this.sock;
    this.sock = undefined;
    const hung = this.hung.splice(0);
    await Promise.all([sock, ...hung].map((s) => s?.end(undefined)));
  }
}

async function post(controlUrl: string, path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${controlUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json: unknown = await res.json();
  if (!res.ok) throw new Error(`POST ${path} -> ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates the phone number on the network (idempotent). */
export function createPhone(sandbox: Pick<RunningSandbox, 'descriptor'>, phone: string, pushName?: string) {
  return post(sandbox.descriptor.controlUrl, '/phones', { phone, pushName });
}

/**
 * Links a new Baileys client to `phone` the way a user would: create the number, open a socket,
 * let the phone scan its first QR through the control API, follow the 515 restart, and resolve
 * once the client reports `connection: 'open'`.
 */
export async function linkClient(
  sandbox: Pick<RunningSandbox, 'descriptor'>,
  phone: string,
  options: ClientOptions & { pushName?: string; timeoutMs?: number } = {},
): Promise<SandboxClient> {
  await createPhone(sandbox, phone, options.pushName);
  const client = new SandboxClient(sandbox.descriptor, options);
  client.start();
  const qr = await waitFor('a QR code', () => client.qr, { timeoutMs: options.timeoutMs ?? 30_000 });
  await post(sandbox.descriptor.controlUrl, '/scan', { phone, qr });
  await client.waitForOpen(1, options.timeoutMs ?? 30_000);
  await bootstrapReceipted(sandbox, client, phone, options.timeoutMs ?? 30_000);
  return client;
}

/** The messages of a new companion's history bootstrap (sandbox/phone/phone.ts), sent right after the link. */
const HISTORY_BOOTSTRAP_MESSAGES = 2;

/**
 * Resolves once a newly linked client got its phone's history bootstrap and the sandbox saw its
 * receipts. A test that stops or kicks the client sooner brings the bootstrap to it again, and
 * Baileys logs the second decryption as an error (a flake under load).
 */
async function bootstrapReceipted(sandbox: Pick<RunningSandbox, 'descriptor'>, client: SandboxClient, phone: string, timeoutMs: number) {
  await waitFor('the history bootstrap', () => client.rawMessages.length >= HISTORY_BOOTSTRAP_MESSAGES, { timeoutMs });
  await waitFor(
    'the history bootstrap receipted',
    async () => (await linkedDevices(sandbox, phone)).find((d) => d.jid === client.jid)?.unreceipted === 0,
    { timeoutMs },
  );
}

/** The devices linked to `phone`, as the sandbox's control API tells them. */
export async function linkedDevices(sandbox: Pick<RunningSandbox, 'descriptor'>, phone: string) {
  const res = await fetch(`${sandbox.descriptor.controlUrl}/phones/${phone}`);
  return ((await res.json()) as { devices: Array<{ device: number; jid: string; unreceipted: number }> }).devices;
}

/**
 * Resolves once every device of `phone` has receipted what was written to it. A client emits a
 * message before its receipt has reached the network: closed or kicked meanwhile, it would get
 * the message again (and Baileys logs the second decryption as an error).
 */
export function receiptsArrived(sandbox: Pick<RunningSandbox, 'descriptor'>, phone: string) {
  return waitFor('the receipts of the messages delivered so far', async () =>
    (await linkedDevices(sandbox, phone)).every((device) => device.unreceipted === 0),
  );
}

/** POST /pair: the phone enters a pairing code. Answers the status and body, whatever they are. */
export async function enterPairingCode(
  sandbox: Pick<RunningSandbox, 'descriptor'>,
  phone: string,
  code: string,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${sandbox.descriptor.controlUrl}/pair`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ phone, code }),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * Starts a Baileys client that asks `phone` for a pairing code, as a user choosing "link with
 * phone number" would: create the number, open a socket, wait until it waits for a link (its
 * first QR), then `requestPairingCode`. Resolves with the client and the code it shows.
 */
export async function requestCodeClient(
  sandbox: Pick<RunningSandbox, 'descriptor'>,
  phone: string,
  options: ClientOptions & { timeoutMs?: number } = {},
): Promise<{ client: SandboxClient; code: string }> {
  await createPhone(sandbox, phone);
  const client = new SandboxClient(sandbox.descriptor, options);
  const sock = client.start();
  await waitFor('the socket to wait for a link', () => client.qr, { timeoutMs: options.timeoutMs ?? 30_000 });
  const code = await sock.requestPairingCode(phone);
  return { client, code };
}
