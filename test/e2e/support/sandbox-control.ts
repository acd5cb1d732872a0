import type { SandboxCall } from '../../../sandbox/network/calls.js';
import type { Undelivered } from '../../../sandbox/network/network.js';

/**
 * The sandbox network's control API (sandbox/control-api.ts), as the tests use it: phones,
 * QR scans, messages sent from a phone (device 0), the phone's inbox and its read/played receipts, kicks,
 * WhatsApp's refusals and withheld acks, client versions.
 */
interface PhoneInboxMessage {
  id?: string;
  from?: string;
  text?: string;
  [field: string]: unknown;
}

export interface SandboxControl {
  createPhone(phone: string, pushName?: string): Promise<{ jid: string; lid: string }>;
  scan(phone: string, qr: string): Promise<unknown>;
  /** The phone enters a pairing code (POST /pair); the answer whatever its status (a wrong code is 400). */
  pair(phone: string, code: string): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Sends a text from the phone itself (device 0); `to` is a phone number or JID. */
  sendFromPhone(phone: string, to: string, text: string): Promise<{ id: string }>;
  /** Gives the phone conversations for its history (sandbox/phone/history.ts `seedHistory`). */
  seedHistory(
    phone: string,
    seed: { chats: number; messagesPerChat: number; days?: number; media?: number },
  ): Promise<{ messages: number }>;
  /** The conversations the phone keeps, oldest message first. */
  history(phone: string): Promise<SandboxChat[]>;
  /** The media host forgets a kept message's file; `phoneKeeps`: the phone can upload it again. */
  expireMedia(phone: string, messageId: string, phoneKeeps: boolean): Promise<unknown>;
  /** The phone sends its RECENT or FULL history to its companions again. */
  pushHistory(phone: string, kind: 'recent' | 'full'): Promise<unknown>;
  inbox(phone: string): Promise<PhoneInboxMessage[]>;
  devices(phone: string): Promise<{ device: number; jid: string }[]>;
  /** Group metadata queries the phone's devices (the gateway's socket among them) have asked. */
  groupMetadataQueries(phone: string): Promise<number>;
  kick(phone: string, device: number, kind: string): Promise<unknown>;
  /** The phone calls `to` (a phone number or JID): its devices ring. */
  call(phone: string, to: string, video?: boolean): Promise<{ ok: true; callId: string }>;
  /** The phone hangs up a ringing call: it ends unanswered (missed). */
  endCall(phone: string, callId: string): Promise<{ ok: true; call: SandboxCall }>;
  /** The calls the phone made or received, with how each ended. */
  calls(phone: string): Promise<SandboxCall[]>;
  /** The phone reads (or plays) messages it received: their senders get read (played) receipts. */
  markReceived(phone: string, type: 'read' | 'played', messageIds: string[]): Promise<{ receipted: string[] }>;
  /** WhatsApp refuses the phone's account's next `count` sends with a nack carrying `error` (POST /limits), `delayMs` after each. */
  limit(phone: string, error: 429 | 463, count: number, delayMs?: number): Promise<unknown>;
  /** The account's next `count` sends are delivered without their server ack (POST /acks/withhold). */
  withholdAcks(phone: string, count: number): Promise<unknown>;
  /** What the network still owes the linked devices (GET /health): all zero once they took in everything. */
  undelivered(): Promise<Undelivered>;
  /** The client versions the network accepts, what each device (`<phone>.<device>`) announced, the logins refused. */
  versions(): Promise<SandboxVersions>;
  /** Moves WhatsApp: the version `/sw.js` serves and the minimum a login must announce (null: any). */
  setVersions(change: { current?: string; minimum?: string | null }): Promise<SandboxVersions>;
}

interface SandboxVersions {
  current: string;
  minimum: string | null;
  swJsServed: number;
  announced: Record<string, string>;
  refused: Record<string, number>;
}

/** A conversation as a sandbox phone keeps it (GET /phones/:phone/history). */
export interface SandboxChat {
  jid: string;
  name?: string;
  pushName?: string;
  unread: number;
  messages: Array<{ id: string; fromMe: boolean; timestamp: number }>;
}

export function sandboxControl(controlUrl: string): SandboxControl {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${controlUrl}${path}`, {
      method,
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    const json = (await response.json()) as T & { error?: string };
    if (!response.ok) throw new Error(`sandbox ${method} ${path}: ${response.status} ${json.error ?? ''}`);
    return json;
  }
  return {
    createPhone: (phone, pushName) => call('POST', '/phones', { phone, ...(pushName ? { pushName } : {}) }),
    scan: (phone, qr) => call('POST', '/scan', { phone, qr }),
    async pair(phone, code) {
      const response = await fetch(`${controlUrl}/pair`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ phone, code }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    sendFromPhone: (phone, to, text) => call('POST', `/phones/${phone}/messages`, { to, text }),
    seedHistory: (phone, seed) => call('POST', `/phones/${phone}/history`, seed),
    history: async (phone) => (await call<{ chats: SandboxChat[] }>('GET', `/phones/${phone}/history`)).chats,
    expireMedia: (phone, messageId, phoneKeeps) => call('POST', `/phones/${phone}/media/expire`, { messageId, phoneKeeps }),
    pushHistory: (phone, kind) => call('POST', `/phones/${phone}/history/push`, { kind }),
    inbox: async (phone) => (await call<{ messages: PhoneInboxMessage[] }>('GET', `/phones/${phone}/messages`)).messages,
    devices: async (phone) => (await call<{ devices: { device: number; jid: string }[] }>('GET', `/phones/${phone}`)).devices,
    groupMetadataQueries: async (phone) => (await call<{ groupMetadataQueries: number }>('GET', `/phones/${phone}`)).groupMetadataQueries,
    kick: (phone, device, kind) => call('POST', '/kick', { phone, device, kind }),
    call: (phone, to, video) => call('POST', `/phones/${phone}/call`, { to, ...(video !== undefined ? { video } : {}) }),
    endCall: (phone, callId) => call('POST', `/phones/${phone}/call/end`, { callId }),
    calls: async (phone) => (await call<{ calls: SandboxCall[] }>('GET', `/phones/${phone}/calls`)).calls,
    markReceived: (phone, type, messageIds) => call('POST', `/phones/${phone}/${type}`, { messageIds }),
    limit: (phone, error, count, delayMs) => call('POST', '/limits', { phone, error, count, ...(delayMs ? { delayMs } : {}) }),
    withholdAcks: (phone, count) => call('POST', '/acks/withhold', { phone, count }),
    undelivered: async () => (await call<{ undelivered: Undelivered }>('GET', '/health')).undelivered,
    versions: () => call('GET', '/version'),
    setVersions: (change) => call('PUT', '/version', change),
  };
}
