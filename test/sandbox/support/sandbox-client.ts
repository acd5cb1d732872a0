import { Writable } from 'node:stream';
import {
  DisconnectReason,
  makeWASocket,
  type WAMessage,
  type WAMessageUpdate,
  type WASocket,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';
import type { RunningSandbox, SandboxDescriptor } from '../../../sandbox/index.js';
import { sandboxSocketOptions } from '../../../sandbox/client.js';
import { memoryAuthState, type MemoryAuthState } from './memory-auth.js';

export interface LogEntry {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

/** A pino logger that keeps error-level (and worse) entries so a test can assert there were none. */
export function collectingLogger(entries: LogEntry[]) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) {
        if (line) entries.push(JSON.parse(line) as LogEntry);
      }
      done();
    },
  });
  return pino({ level: 'error' }, sink);
}

/** Polls `check` until it returns a value (not undefined/false) or the deadline passes. */
export async function waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Like waitFor, for checks that must await (e.g. an HTTP call to the control API). */
export async function pollUntil<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface ClientOptions {
  /** Reconnect after any close except logout (515 restarts are always followed). Default true. */
  autoReconnect?: boolean;
  auth?: MemoryAuthState;
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
  readonly errors: LogEntry[] = [];
  openCount = 0;
  /** History sync payloads received (the phone's INITIAL_BOOTSTRAP after linking). */
  historySyncs = 0;
  qr: string | undefined;
  private stopped = false;
  private readonly autoReconnect: boolean;

  constructor(
    private descriptor: SandboxDescriptor,
    options: ClientOptions = {},
  ) {
    this.auth = options.auth ?? memoryAuthState();
    this.autoReconnect = options.autoReconnect ?? true;
  }

  /**
   * Error-level log entries except Baileys' own report of a server stream error, which it logs
   * at error level for every expected restart (515 after pairing) and kick.
   */
  get unexpectedErrors(): LogEntry[] {
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
    const sock = makeWASocket({
      ...sandboxSocketOptions(descriptor),
      auth: this.auth,
      logger: collectingLogger(this.errors),
      printQRInTerminal: false,
      markOnlineOnConnect: false,
      browser: ['Sandbox', 'Chrome', '1.0'],
    });
    this.sock = sock;
    sock.ev.on('creds.update', (update) => Object.assign(this.auth.creds, update));
    sock.ev.on('messages.upsert', ({ messages, type }) => {
      for (const m of messages) if (m.key.id) this.upsertTypes.set(m.key.id, type);
      this.messages.push(...messages);
    });
    sock.ev.on('messages.update', (updates) => this.updates.push(...updates));
    sock.ev.on('messaging-history.set', () => this.historySyncs++);
    sock.ev.on('connection.update', ({ connection, qr, lastDisconnect }) => {
      if (qr) this.qr = qr;
      if (connection === 'open') this.openCount++;
      if (connection === 'close') {
        const code = (lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode ?? 0;
        this.closeCodes.push(code);
        if (this.sock !== sock || this.stopped) return;
        const restart = code === DisconnectReason.restartRequired;
        if (restart || (this.autoReconnect && code !== DisconnectReason.loggedOut)) this.start();
      }
    });
    return sock;
  }

  /** Resolves once the client has opened `count` times in total. */
  waitForOpen(count = this.openCount + 1, timeoutMs = 30_000): Promise<void> {
    return waitFor(() => this.openCount >= count, `connection open #${count}`, timeoutMs).then(() => undefined);
  }

  waitForMessage(predicate: (m: WAMessage) => boolean, what = 'a message', timeoutMs = 30_000): Promise<WAMessage> {
    return waitFor(() => this.messages.find(predicate), what, timeoutMs);
  }

  /**
   * Resolves once a sent message reached `minStatus` (proto.WebMessageInfo.Status). Baileys
   * reports it as a messages.update, or, when the receipt arrived while its event buffer held
   * the message's own upsert, folded into that upsert's `status`.
   */
  waitForStatus(messageId: string, minStatus: number, timeoutMs = 30_000): Promise<number> {
    return waitFor(
      () => {
        const fromUpdates = this.updates.filter((u) => u.key.id === messageId).map((u) => u.update.status ?? 0);
        const fromUpserts = this.messages.filter((m) => m.key.id === messageId).map((m) => m.status ?? 0);
        const best = Math.max(0, ...fromUpdates, ...fromUpserts);
        return best >= minStatus ? best : undefined;
      },
      `status >= ${minStatus} for ${messageId}`,
      timeoutMs,
    );
  }

  /** Closes the socket without reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    const sock = this.sock;
    this.sock = undefined;
    if (sock) await sock.end(undefined);
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
  const qr = await waitFor(() => client.qr, 'a QR code', options.timeoutMs ?? 30_000);
  await post(sandbox.descriptor.controlUrl, '/scan', { phone, qr });
  await client.waitForOpen(1, options.timeoutMs ?? 30_000);
  return client;
}
