import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Logger } from '../log.js';
import type { MediaUploads } from '../media-host.js';
import type { NoiseKeys } from '../certs.js';
import { AccountRegistry } from './accounts.js';
import type { Account, CompanionDevice } from './model.js';
import { lidJid, pnJid } from './jids.js';
import { GroupRegistry } from '../groups/registry.js';
import { GroupReceiptLedger } from '../groups/receipts.js';
import { Calls } from './calls.js';
import { SendLimits } from './send-limits.js';
import { awaitsReceipt, enforceKeptLimit, noteAck, noteReceipt, noteSent, requeueUnreceipted } from './delivery.js';

/** What the network needs from a live client connection. */
export interface DeviceConnection {
  readonly account: Account | undefined;
  readonly device: number | undefined;
  send(node: BinaryNode): void;
  /** Sends a stream error (or nothing) and closes the socket. */
  kick(error?: BinaryNode): void;
}

export type Addressing = 'pn' | 'lid';

export interface MessageOrigin {
  phone: string;
  device: number;
  /** Bit set of receipt types already forwarded to the sender (RECEIPT_BITS). */
  forwarded?: number;
}

/** Receipt types the sender hears once per message, like WhatsApp, whatever the device count. */
const RECEIPT_BITS: Record<string, number> = { delivery: 1, read: 2, played: 4 };

const ORIGIN_LIMIT = 100_000;

/** What the network still owes the linked devices (`Network.undelivered`, `GET /health`). */
export interface Undelivered {
  /** Linked devices whose history bootstrap is not sent yet. */
  awaitingBootstrap: number;
  /** Message stanzas queued for a device's next login. */
  queued: number;
  /** Message stanzas written to a device and not receipted or acked yet. */
  unreceipted: number;
}

/**
 * The live network: accounts, who is online, offline queues, and which device sent which
 * message (receipts go back to it). All lookups are by key, never a scan per message.
 */
export class Network {
  readonly accounts: AccountRegistry;
  readonly groups: GroupRegistry;
  /** Group receipts already forwarded (once per message, member and type). */
  readonly groupReceipts = new GroupReceiptLedger();
  /** Calls from phones to accounts (calls.ts). */
  readonly calls: Calls = new Calls(this);
  /** WhatsApp's refusals and withheld acks, set through the control API (send-limits.ts). */
  readonly sendLimits = new SendLimits();
  private readonly online = new Map<string, DeviceConnection>();
  /** Connections that got their offline backlog: only these receive stanzas live (keeps order). */
  private readonly flushed = new WeakSet<DeviceConnection>();
  private readonly origins = new Map<string, MessageOrigin>();
  /** Accounts that exchanged messages: they hear about each other's device changes. */
  private readonly peers = new Map<string, Set<string>>();
  mediaHost = '';
  /** The media host's store, for what the phones upload (history syncs, media in them). */
  media: MediaUploads | undefined;

  constructor(
    readonly noiseKeys: NoiseKeys,
    readonly logger: Logger,
    private readonly onChange: () => void,
    /**
     * How stanzas name their sender: by phone number with `sender_lid` (default), or, as
     * WhatsApp increasingly does, by LID with `sender_pn`.
     */
    readonly addressing: Addressing = 'pn',
  ) {
    this.accounts = new AccountRegistry(onChange);
    this.groups = new GroupRegistry(onChange);
  }

  /** The JID (user, or device when given) that names `account` in delivered stanzas. */
  jidOf(account: Account, device = 0, lid = this.addressing === 'lid'): string {
    return lid ? lidJid(account.lid, device) : pnJid(account.phone, device);
  }

  /** `from` plus the alternate address attribute of a stanza sent by account:device. */
  senderAttrs(account: Account, device: number, lid = this.addressing === 'lid'): Record<string, string> {
    return lid
      ? { from: lidJid(account.lid, device), sender_pn: pnJid(account.phone) }
      : { from: pnJid(account.phone, device), sender_lid: lidJid(account.lid) };
  }

  changed(): void {
    this.onChange();
  }

  static key(phone: string, device: number): string {
    return `${phone}:${device}`;
  }

  connectionOf(phone: string, device: number): DeviceConnection | undefined {
    return this.online.get(Network.key(phone, device));
  }

  /** Registers a logged-in connection; an older one for the same device is replaced (440). */
  attach(conn: DeviceConnection & { account: Account; device: number }): void {
    const key = Network.key(conn.account.phone, conn.device);
    const previous = this.online.get(key);
    this.online.set(key, conn);
    if (previous && previous !== conn) {
      previous.kick({
        tag: 'stream:error',
        attrs: {},
        content: [{ tag: 'conflict', attrs: { type: 'replaced' } }],
      });
    }
  }

  /** Forgets a closed connection; what it was sent but did not receipt waits for the next login. */
  detach(conn: DeviceConnection): void {
    if (!conn.account || conn.device === undefined) return;
    const key = Network.key(conn.account.phone, conn.device);
    if (this.online.get(key) !== conn) return;
    this.online.delete(key);
    this.requeue(conn.account, conn.device);
  }

  private requeue(account: Account, device: number): void {
    const companion = account.devices.get(device);
    if (companion && requeueUnreceipted(companion)) this.onChange();
  }

  onlineCount(): number {
    return this.online.size;
  }

  /**
   * What the network still owes the linked devices: those whose history bootstrap is not sent
   * yet, and message stanzas queued for a login or written and not yet receipted or acked. All
   * zero once every device took in everything sent to it (bench:connector waits for that after
   * linking, so that a restart starts from a settled network).
   */
  undelivered(): Undelivered {
    const totals: Undelivered = { awaitingBootstrap: 0, queued: 0, unreceipted: 0 };
    for (const account of this.accounts.all()) {
      for (const companion of account.devices.values()) {
        if (!companion.bootstrapped) totals.awaitingBootstrap += 1;
        totals.queued += companion.queue.length;
        totals.unreceipted += companion.unreceipted.size;
      }
    }
    return totals;
  }

  /**
   * Sends to a companion device now, or queues it for its next login. A message stanza stays
   * kept until the device receipts or acks it: if its connection closes first, the stanza is
   * delivered again at the next login.
   */
  deliver(account: Account, device: number, node: BinaryNode): void {
    const companion = account.devices.get(device);
    if (!companion) return;
    const conn = this.online.get(Network.key(account.phone, device));
    if (conn && this.flushed.has(conn)) {
      this.sendKept(conn, account, companion, node);
      return;
    }
    companion.queue.push(node);
    this.keepWithinLimit(account, companion);
    this.onChange();
  }

  private sendKept(conn: DeviceConnection, account: Account, companion: CompanionDevice, node: BinaryNode): void {
    conn.send(node);
    if (!awaitsReceipt(node)) return;
    noteSent(companion, node);
    this.keepWithinLimit(account, companion);
    this.onChange();
  }

  private keepWithinLimit(account: Account, companion: CompanionDevice): void {
    const dropped = enforceKeptLimit(companion);
    if (dropped) {
      this.logger.warn(
        { phone: account.phone, device: companion.device, dropped },
        'too many stanzas kept for a device (queued or unreceipted): dropped the oldest',
      );
    }
  }

  /**
   * Flushes a device's backlog with offline="1" (first what an earlier connection was sent but
   * never receipted, then the offline queue), then tells it the backlog is done.
   */
  flushOffline(conn: DeviceConnection & { account: Account; device: number }): void {
    const companion = conn.account.devices.get(conn.device);
    if (!companion) return;
    requeueUnreceipted(companion);
    const queued = companion.queue.splice(0);
    for (const node of queued) this.sendKept(conn, conn.account, companion, { ...node, attrs: { ...node.attrs, offline: '1' } });
    conn.send({ tag: 'ib', attrs: {}, content: [{ tag: 'offline', attrs: { count: String(queued.length) } }] });
    this.flushed.add(conn);
    if (queued.length) this.onChange();
  }

  /** The device receipted these messages (any receipt but a retry): they are no longer kept. */
  received(companion: CompanionDevice, messageIds: readonly string[]): void {
    if (noteReceipt(companion, messageIds)) this.onChange();
  }

  /** The device acked one message stanza (`<ack class="message">`). */
  acknowledged(companion: CompanionDevice, messageId: string): void {
    if (noteAck(companion, messageId)) this.onChange();
  }

  rememberOrigin(messageId: string, origin: MessageOrigin): void {
    if (this.origins.size >= ORIGIN_LIMIT) {
      const oldest = this.origins.keys().next().value;
      if (oldest !== undefined) this.origins.delete(oldest);
    }
    this.origins.set(messageId, origin);
  }

  originOf(messageId: string): MessageOrigin | undefined {
    return this.origins.get(messageId);
  }

  /**
   * True the first time a receipt of `type` for a message is seen: the sender hears "delivered"
   * once however many recipient devices got it (and "read" once).
   */
  firstReceipt(messageId: string, type: string): boolean {
    const origin = this.origins.get(messageId);
    const bit = RECEIPT_BITS[type];
    if (!origin || !bit) return true;
    if ((origin.forwarded ?? 0) & bit) return false;
    origin.forwarded = (origin.forwarded ?? 0) | bit;
    return true;
  }

  notePeers(a: Account, b: Account): void {
    if (a === b) return;
    this.peerSet(a.phone).add(b.phone);
    this.peerSet(b.phone).add(a.phone);
  }

  private peerSet(phone: string): Set<string> {
    let set = this.peers.get(phone);
    if (!set) {
      set = new Set();
      this.peers.set(phone, set);
    }
    return set;
  }

  /**
   * Baileys caches device lists for minutes: tell the account's own devices and its peers'
   * devices that the list changed, in both addressings, so the next send re-fetches it.
   */
  notifyDevicesChanged(account: Account, changedDevice: number): void {
    const notification = (to: Account): BinaryNode => ({
      tag: 'notification',
      attrs: {
        from: pnJid(account.phone),
        type: 'devices',
        id: `dev-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
        t: String(Math.floor(Date.now() / 1000)),
        to: pnJid(to.phone),
      },
      content: [
        {
          tag: 'update',
          attrs: {},
          content: [
            { tag: 'device', attrs: { jid: pnJid(account.phone, changedDevice) } },
            { tag: 'device', attrs: { jid: lidJid(account.lid, changedDevice) } },
          ],
        },
      ],
    });
    const audience = [account.phone, ...(this.peers.get(account.phone) ?? [])];
    for (const phone of audience) {
      const target = this.accounts.get(phone);
      if (!target) continue;
      for (const device of target.devices.keys()) {
        const conn = this.online.get(Network.key(phone, device));
        conn?.send(notification(target));
      }
    }
  }

  /** Closes the device's connection (a kick); answers whether it was online. */
  kick(phone: string, device: number, error?: BinaryNode): boolean {
    const key = Network.key(phone, device);
    const conn = this.online.get(key);
    if (!conn) return false;
    this.online.delete(key);
    const account = this.accounts.get(phone);
    if (account) this.requeue(account, device);
    conn.kick(error);
    return true;
  }

  closeAll(): void {
    for (const [key, conn] of [...this.online]) {
      this.online.delete(key);
      if (conn.account && conn.device !== undefined) this.requeue(conn.account, conn.device);
      conn.kick();
    }
  }
}
