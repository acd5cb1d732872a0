import {
  encodeWAMessage,
  generateMessageID,
  generateSignalPubKey,
  proto,
  unpadRandomMax16,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import { ProtocolAddress, SessionBuilder, SessionCipher, type SignalStorage } from 'libsignal';
import type { Network } from '../network/network.js';
import type { Account, CompanionDevice } from '../network/model.js';
import { INBOX_LIMIT, UNDECRYPTED_LIMIT, type PhoneInboxEntry } from '../network/model.js';
import { pnJid } from '../network/jids.js';
import { KeyedSerial } from '../../core/serial.js';
import { phoneSignalStore } from './signal-store.js';
import { summarize } from './messages.js';
import { keepMessage, type HistoryKind } from './history.js';
import { HistoryPush } from './history-push.js';

const now = () => Math.floor(Date.now() / 1000);

/**
 * The simulated primary phones (device 0 of every account): they hold Signal sessions with
 * companion devices, send and receive encrypted messages, and bootstrap new companions.
 */
export class Phones {
  private readonly stores = new Map<string, SignalStorage>();
  /** Recent plaintexts the phones sent, for answering retry receipts. */
  private readonly sent = new Map<string, { message: proto.IMessage; to: string }>();

  /** The conversations pushed to companions and the on-demand answers (history-push.ts). */
  private readonly history: HistoryPush;

  constructor(private readonly network: Network) {
    this.history = new HistoryPush(network, {
      serial: (phone, work) => this.serial(phone, work),
      send: (phone, companion, message) => this.sendToCompanion(phone, companion, message),
      decrypt: (phone, device, type, ciphertext) => this.decryptFromCompanion(phone, device, type, ciphertext),
    });
  }

  private store(account: Account): SignalStorage {
    let store = this.stores.get(account.phone);
    if (!store) {
      store = phoneSignalStore(account.phoneIdentity, () => this.network.changed());
      this.stores.set(account.phone, store);
    }
    return store;
  }

  private address(account: Account, device: number) {
    return new ProtocolAddress(account.phone, device);
  }

  private async ensureSession(phone: Account, target: Account, companion: CompanionDevice, force = false) {
    const address = this.address(target, companion.device);
    const store = this.store(phone);
    if (!force && (await store.loadSession(address.toString()))) return;
    const [firstPreKey] = companion.preKeys.entries();
    if (firstPreKey) {
      companion.preKeys.delete(firstPreKey[0]);
      this.network.changed();
    }
    // libsignal's typings make the one-time pre-key mandatory; its code (and Signal) allow none.
    await new SessionBuilder(store, address).initOutgoing({
      registrationId: companion.registrationId,
      identityKey: generateSignalPubKey(companion.identityKey),
      signedPreKey: {
        keyId: companion.signedPreKey.keyId,
        publicKey: generateSignalPubKey(companion.signedPreKey.publicKey),
        signature: companion.signedPreKey.signature,
      },
      preKey: firstPreKey ? { keyId: firstPreKey[0], publicKey: generateSignalPubKey(firstPreKey[1]) } : undefined,
    } as Parameters<SessionBuilder['initOutgoing']>[0]);
  }

  private async encryptFor(phone: Account, target: Account, companion: CompanionDevice, message: proto.IMessage) {
    await this.ensureSession(phone, target, companion);
    const cipher = new SessionCipher(this.store(phone), this.address(target, companion.device));
    const { type, body } = await cipher.encrypt(encodeWAMessage(message));
    return { type: type === 3 ? 'pkmsg' : 'msg', ciphertext: Buffer.from(body, 'binary') };
  }

  private async sendEncrypted(
    phone: Account,
    target: Account,
    companion: CompanionDevice,
    message: proto.IMessage,
    attrs: Record<string, string>,
  ): Promise<void> {
    const { type, ciphertext } = await this.encryptFor(phone, target, companion, message);
    this.network.deliver(target, companion.device, {
      tag: 'message',
      attrs: { ...this.network.senderAttrs(phone, 0), t: String(now()), ...attrs },
      content: [{ tag: 'enc', attrs: { v: '2', type }, content: ciphertext }],
    });
  }

  /** POST /phones/:phone/messages: device 0 sends a text to every device of `to` and to its own companions. */
  sendText(phone: Account, target: Account, text: string): Promise<string> {
    return this.serial(phone, () => this.sendTextNow(phone, target, text));
  }

  private async sendTextNow(phone: Account, target: Account, text: string): Promise<string> {
    const id = generateMessageID();
    const message: proto.IMessage = { conversation: text };
    const destination = this.network.jidOf(target);
    this.remember(id, message, destination);
    this.network.notePeers(phone, target);
    this.network.rememberOrigin(id, { phone: phone.phone, device: 0 });
    const attrs = { id, type: 'text', notify: phone.pushName };
    const sends: Promise<void>[] = [];
    if (target !== phone) {
      for (const companion of target.devices.values()) {
        sends.push(this.sendEncrypted(phone, target, companion, message, attrs));
      }
      this.record(target, { id, from: pnJid(phone.phone), ...summarize(message), timestamp: now() });
      keepMessage(target, pnJid(phone.phone), { id, fromMe: false, timestamp: now(), message }, { unread: true, pushName: phone.pushName });
      keepMessage(phone, pnJid(target.phone), { id, fromMe: true, timestamp: now(), message });
    }
    const sentCopy: proto.IMessage = { deviceSentMessage: { destinationJid: destination, message } };
    for (const companion of phone.devices.values()) {
      sends.push(this.sendEncrypted(phone, phone, companion, sentCopy, { ...attrs, recipient: destination }));
    }
    await Promise.all(sends);
    return id;
  }

  private remember(id: string, message: proto.IMessage, to: string) {
    if (this.sent.size > 10_000) {
      const oldest = this.sent.keys().next().value;
      if (oldest !== undefined) this.sent.delete(oldest);
    }
    this.sent.set(id, { message, to });
  }

  private record(account: Account, entry: Account['phoneIdentity']['inbox'][number]) {
    const inbox = account.phoneIdentity.inbox;
    inbox.push(entry);
    if (inbox.length > INBOX_LIMIT) inbox.splice(0, inbox.length - INBOX_LIMIT);
    this.network.changed();
  }

  /**
   * A companion's message addressed to this phone. Copies of our own companions' sends are not
   * kept (the phone never shows them). Others' messages are answered with a delivery receipt at
   * once and kept as ciphertext: decrypting costs more than routing, so it waits until the
   * inbox is read (`readInbox`), in arrival order, which is what the Signal ratchet needs.
   */
  receive(phone: Account, sender: Account, senderDevice: number, stanza: BinaryNode): void {
    const enc = Array.isArray(stanza.content) ? stanza.content.find((n) => n.tag === 'enc') : undefined;
    if (!enc || !(enc.content instanceof Uint8Array)) return;
    if (sender === phone) {
      if (stanza.attrs.category !== 'peer') return;
      const ciphertext = Buffer.from(enc.content);
      this.history.answerPeer(phone, senderDevice, stanza.attrs.id ?? '', enc.attrs.type ?? 'msg', ciphertext).catch((err: unknown) => {
        this.network.logger.warn({ err, phone: phone.phone }, 'phone could not answer a peer request');
      });
      return;
    }
    const id = stanza.attrs.id ?? '';
    const pending = phone.phoneIdentity.undecrypted;
    pending.push({
      id,
      senderPhone: sender.phone,
      senderDevice,
      type: enc.attrs.type ?? 'msg',
      ciphertext: Buffer.from(enc.content),
      timestamp: Number(stanza.attrs.t) || now(),
    });
    if (pending.length > UNDECRYPTED_LIMIT) void this.decryptPending(phone);
    this.network.changed();
    if (this.network.firstReceipt(id, 'delivery')) {
      this.network.deliver(sender, senderDevice, { tag: 'receipt', attrs: { from: this.network.jidOf(phone), id, t: String(now()) } });
    }
  }

  /**
   * A group message for this phone's account. The phones keep no sender keys, so it is not
   * decrypted: its id, group and sender are kept, in arrival order with the other messages, so
   * that the phone can read it (POST /phones/:phone/read). Its delivery receipt went out with the
   * fan-out (sandbox/groups/fanout.ts).
   */
  receiveGroup(phone: Account, sender: Account, senderDevice: number, groupJid: string, stanza: BinaryNode): void {
    if (sender === phone || !stanza.attrs.id) return;
    phone.phoneIdentity.undecrypted.push({
      id: stanza.attrs.id,
      senderPhone: sender.phone,
      senderDevice,
      type: 'skmsg',
      ciphertext: Buffer.alloc(0),
      timestamp: Number(stanza.attrs.t) || now(),
      group: groupJid,
    });
    if (phone.phoneIdentity.undecrypted.length > UNDECRYPTED_LIMIT) void this.decryptPending(phone);
    this.network.changed();
  }

  /** What device 0 received, decrypted: GET /phones/:phone/messages. */
  async readInbox(phone: Account): Promise<PhoneInboxEntry[]> {
    await this.decryptPending(phone);
    return phone.phoneIdentity.inbox;
  }

  /**
   * Everything a phone does with its Signal sessions runs one at a time, in call order: its
   * messages keep their order and two sends never race to set up the same session.
   */
  private readonly queues = new KeyedSerial();

  private serial<T>(phone: Account, work: () => Promise<T>): Promise<T> {
    return this.queues.run(phone.phone, work);
  }

  private decryptPending(phone: Account): Promise<void> {
    return this.serial(phone, async () => {
      const pending = phone.phoneIdentity.undecrypted.splice(0);
      for (const item of pending) {
        const sender = this.network.accounts.get(item.senderPhone);
        if (!sender) continue;
        if (item.group) {
          this.record(phone, {
            id: item.id,
            from: pnJid(sender.phone),
            chat: item.group,
            text: null,
            type: 'group',
            timestamp: item.timestamp,
          });
          continue;
        }
        try {
          const cipher = new SessionCipher(this.store(phone), this.address(sender, item.senderDevice));
          const padded =
            item.type === 'pkmsg'
              ? await cipher.decryptPreKeyWhisperMessage(item.ciphertext)
              : await cipher.decryptWhisperMessage(item.ciphertext);
          const message = proto.Message.decode(unpadRandomMax16(padded));
          const summary = summarize(message);
          this.record(phone, { id: item.id, from: pnJid(sender.phone), ...summary, timestamp: item.timestamp });
          if (KEPT_IN_CONVERSATIONS.has(summary.type)) {
            const entry = { id: item.id, fromMe: false, timestamp: item.timestamp, message };
            keepMessage(phone, pnJid(sender.phone), entry, { unread: true, pushName: sender.pushName });
          }
        } catch (err) {
          this.network.logger.warn({ err, messageId: item.id }, 'phone could not decrypt a message');
        }
      }
    });
  }

  /** A retry receipt for a message this phone sent: rebuild the session and send it again. */
  resend(phone: Account, requester: Account, device: number, messageId: string): Promise<void> {
    return this.serial(phone, () => this.resendNow(phone, requester, device, messageId));
  }

  private async resendNow(phone: Account, requester: Account, device: number, messageId: string): Promise<void> {
    const original = this.sent.get(messageId);
    const companion = requester.devices.get(device);
    if (!original || !companion) return;
    await this.ensureSession(phone, requester, companion, true);
    const message =
      requester === phone ? { deviceSentMessage: { destinationJid: original.to, message: original.message } } : original.message;
    const attrs: Record<string, string> = { id: messageId, type: 'text', notify: phone.pushName };
    if (requester === phone) attrs.recipient = original.to;
    await this.sendEncrypted(phone, requester, companion, message, attrs);
  }

  /** After a link: the bootstrap, push names and conversations (history-push.ts). */
  sendHistoryBootstrap(phone: Account, companion: CompanionDevice, known: Account[]): Promise<void> {
    return this.history.sendBootstrap(phone, companion, known);
  }

  /** A peer message from device 0 to one of its companions (history syncs, answers to its requests). */
  private sendToCompanion(phone: Account, companion: CompanionDevice, message: proto.IMessage): Promise<void> {
    return this.sendEncrypted(phone, phone, companion, message, {
      id: generateMessageID(),
      type: 'text',
      category: 'peer',
      push_priority: 'high_force',
    });
  }

  /** What one of the phone's own companions sent device 0, decrypted. */
  private async decryptFromCompanion(phone: Account, device: number, type: string, ciphertext: Buffer): Promise<proto.IMessage> {
    const cipher = new SessionCipher(this.store(phone), this.address(phone, device));
    const padded = type === 'pkmsg' ? await cipher.decryptPreKeyWhisperMessage(ciphertext) : await cipher.decryptWhisperMessage(ciphertext);
    return proto.Message.decode(unpadRandomMax16(padded));
  }

  /** Sends a history sync to every linked companion again, as the phone may (POST /phones/:phone/history/push). */
  pushHistory(phone: Account, kind: HistoryKind): Promise<void> {
    return this.history.push(phone, kind);
  }
}

/** What a phone keeps in its conversations: messages people read, not reactions or protocol messages. */
const KEPT_IN_CONVERSATIONS: ReadonlySet<string> = new Set(['text', 'image', 'video', 'audio', 'document', 'sticker']);
