import { randomBytes } from 'node:crypto';
import { decodeBinaryNode, encodeBinaryNode, type proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { WebSocket } from 'ws';
import { FrameReader, encodeFrame } from './noise/framing.js';
import { ServerHandshake, type HandshakeResult, type TransportCipher } from './noise/handshake.js';
import type { DeviceConnection } from './network/network.js';
import type { Account, CompanionDevice } from './network/model.js';
import { parseRegistration, type PendingCompanion } from './network/pairing.js';
import type { SandboxCore } from './core.js';
import { SERVER_JID, type StanzaContext } from './handlers/context.js';
import { dispatchStanza } from './handlers/dispatch.js';
import { handleLinkCodeIq } from './handlers/link-code.js';
import { lidJid } from './network/jids.js';
import { SerialQueue } from '../core/serial.js';

/** Baileys installs its transport keys just after sending clientFinish (socket.js:329-335). */
const FIRST_FRAME_DELAY_MS = 50;
const QR_REF_COUNT = 6;
/** A client that has not finished the handshake by then is dropped. */
const HANDSHAKE_TIMEOUT_MS = 20_000;

type State = 'hello' | 'finish' | 'pairing' | 'open' | 'closed';

/**
 * One client WebSocket: the Noise handshake, then either QR pairing (registration payload) or
 * a logged-in device session. A malformed or hostile frame closes this connection only.
 */
export class Connection implements DeviceConnection {
  private state: State = 'hello';
  private readonly reader = new FrameReader();
  private readonly handshake: ServerHandshake;
  private transport: TransportCipher | undefined;
  private readonly inbound = new SerialQueue();
  private readonly replyWaiters = new Map<string, (node: BinaryNode) => void>();
  private pending: PendingCompanion | undefined;
  account: Account | undefined;
  device: number | undefined;
  private companion: CompanionDevice | undefined;
  private context: StanzaContext | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly core: SandboxCore,
  ) {
    this.handshake = new ServerHandshake(core.network.noiseKeys.serverStatic, core.certChain);
    const handshakeTimer = setTimeout(() => {
      if (this.state === 'hello' || this.state === 'finish') this.kick();
    }, HANDSHAKE_TIMEOUT_MS);
    handshakeTimer.unref();
    ws.on('message', (data: Buffer, isBinary: boolean) => this.onData(data, isBinary));
    ws.on('close', () => this.onClosed());
    ws.on('error', () => this.onClosed());
  }

  private get log() {
    return this.core.network.logger;
  }

  private onData(data: Buffer, isBinary: boolean): void {
    if (this.state === 'closed') return;
    let frames: Buffer[];
    try {
      if (!isBinary) throw new Error('text frame');
      frames = this.reader.push(Buffer.from(data));
    } catch (err) {
      this.fail(err);
      return;
    }
    for (const frame of frames) {
      // A bad frame closes the connection before the next frame is looked at.
      void this.inbound.run(async () => {
        try {
          await this.onFrame(frame);
        } catch (err) {
          this.fail(err);
        }
      });
    }
  }

  private fail(err: unknown): void {
    if (this.state === 'closed') return;
    this.log.debug({ err }, 'closing connection after a bad frame');
    this.kick();
  }

  private async onFrame(frame: Buffer): Promise<void> {
    switch (this.state) {
      case 'hello':
        this.ws.send(encodeFrame(this.handshake.respond(frame)));
        this.state = 'finish';
        return;
      case 'finish':
        await this.onHandshakeDone(this.handshake.finish(frame));
        return;
      case 'pairing':
      case 'open': {
        if (!this.transport) return;
        const node = await decodeBinaryNode(this.transport.decrypt(frame));
        this.onStanza(node);
        return;
      }
      case 'closed':
        return;
    }
  }

  private async onHandshakeDone(result: HandshakeResult): Promise<void> {
    this.transport = result.transport;
    const { payload } = result;
    this.state = payload.devicePairingData ? 'pairing' : 'open';
    await new Promise((resolve) => setTimeout(resolve, FIRST_FRAME_DELAY_MS));
    if ((this.state as State) === 'closed') return;
    // WhatsApp judges the announced version before anything else, for a login and a registration alike.
    if (!this.core.clientVersions.admit(payload)) {
      this.kick({ tag: 'failure', attrs: { reason: '405', location: 'sandbox' } });
      return;
    }
    if (payload.devicePairingData) this.startPairing(result.clientStatic, payload.devicePairingData);
    else this.login(result.clientStatic, payload);
  }

  private startPairing(noiseKey: Buffer, data: proto.ClientPayload.IDevicePairingRegistrationData): void {
    const pending: PendingCompanion = {
      ...parseRegistration(noiseKey, data),
      send: (node) => this.send(node),
      kick: (error) => this.kick(error),
      awaitReply: (iqId, timeoutMs) => this.awaitReply(iqId, timeoutMs),
      linking: false,
    };
    this.pending = pending;
    const refs = this.core.pairing.issueRefs(pending, QR_REF_COUNT);
    this.send({
      tag: 'iq',
      attrs: { from: SERVER_JID, type: 'set', id: randomBytes(8).toString('hex'), xmlns: 'md' },
      content: [
        {
          tag: 'pair-device',
          attrs: {},
          content: refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })),
        },
      ],
    });
  }

  private awaitReply(iqId: string, timeoutMs: number): Promise<BinaryNode> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.replyWaiters.delete(iqId);
        reject(new Error('companion did not answer'));
      }, timeoutMs);
      this.replyWaiters.set(iqId, (node) => {
        clearTimeout(timer);
        resolve(node);
      });
    });
  }

  private login(noiseKey: Buffer, payload: proto.ClientPayload): void {
    const phone = payload.username !== undefined && payload.username !== null ? String(payload.username) : '';
    const device = Number(payload.device ?? 0);
    const account = this.core.network.accounts.get(phone);
    const companion = account?.devices.get(device);
    if (!account || !companion?.noiseKey.equals(noiseKey)) {
      this.send({ tag: 'failure', attrs: { reason: '401', location: 'sandbox' } });
      this.kick();
      return;
    }
    this.account = account;
    this.device = device;
    this.companion = companion;
    this.context = {
      network: this.core.network,
      phones: this.core.phones,
      account,
      device,
      companion,
      send: (node) => this.send(node),
      onActive: () => this.onActive(),
      close: () => this.kick(),
    };
    this.core.network.attach(this as DeviceConnection & { account: Account; device: number });
    this.send({
      tag: 'success',
      attrs: {
        t: String(Math.floor(Date.now() / 1000)),
        lid: lidJid(account.lid, device),
        location: 'sandbox',
        creation: String(Math.floor(companion.linkedAt / 1000)),
      },
    });
  }

  private activated = false;

  private onActive(): void {
    const { account, companion } = this;
    if (!account || !companion || this.device === undefined) return;
    if (!this.activated) {
      this.activated = true;
      this.core.network.flushOffline(this as DeviceConnection & { account: Account; device: number });
    }
    if (!companion.bootstrapped) {
      this.core.phones.sendHistoryBootstrap(account, companion, this.core.knownAccounts(account)).catch((err: unknown) => {
        this.log.warn({ err }, 'history bootstrap failed');
      });
    }
  }

  private onStanza(node: BinaryNode): void {
    if (node.tag === 'iq' && (node.attrs.type === 'result' || node.attrs.type === 'error')) {
      const waiter = node.attrs.id ? this.replyWaiters.get(node.attrs.id) : undefined;
      if (waiter && node.attrs.id) {
        this.replyWaiters.delete(node.attrs.id);
        waiter(node);
      }
      return;
    }
    if (this.state === 'pairing') {
      // Before linking, only keep-alives and linking by code are answered.
      if (node.tag === 'iq' && node.attrs.xmlns === 'w:p') {
        this.send({ tag: 'iq', attrs: { from: SERVER_JID, type: 'result', id: node.attrs.id ?? '' } });
      } else if (node.tag === 'iq' && node.attrs.xmlns === 'md' && this.pending) {
        handleLinkCodeIq(this.core.pairing, this.pending, node);
      }
      return;
    }
    if (this.context) dispatchStanza(this.context, node);
  }

  /**
   * Frames are batched per event-loop turn into one WebSocket message (Baileys reads any number
   * of frames from one message): under load this saves a write per stanza.
   */
  private outbox: Buffer[] = [];
  private flushScheduled = false;

  send(node: BinaryNode): void {
    if (this.state === 'closed' || !this.transport || this.ws.readyState !== this.ws.OPEN) return;
    this.outbox.push(encodeFrame(this.transport.encrypt(encodeBinaryNode(node))));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (!this.outbox.length || this.ws.readyState !== this.ws.OPEN) return;
    const frames = this.outbox;
    this.outbox = [];
    this.ws.send(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
  }

  kick(error?: BinaryNode): void {
    if (this.state === 'closed') return;
    if (error) this.send(error);
    this.flush();
    this.onClosed();
    this.ws.close();
  }

  private onClosed(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.pending) this.core.pairing.forget(this.pending);
    this.core.network.detach(this);
    this.replyWaiters.clear();
  }
}
