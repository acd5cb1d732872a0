import type { BinaryNode } from '@whiskeysockets/baileys';
import type { KeyPair } from '../certs.js';

export interface SignedPreKeyRecord {
  keyId: number;
  publicKey: Buffer;
  signature: Buffer;
}

/** A linked companion device (device id >= 1): its keys as it registered and uploaded them. */
export interface CompanionDevice {
  device: number;
  keyIndex: number;
  noiseKey: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: SignedPreKeyRecord;
  /** One-time pre-keys by id; each is handed out once. */
  preKeys: Map<number, Buffer>;
  platform: string;
  linkedAt: number;
  /** The phone sent the initial history bootstrap (only once per linked device). */
  bootstrapped: boolean;
  /** The companion asked for the full history when it registered (DeviceProps.requireFullSync). */
  fullSync?: boolean;
  /** Stanzas waiting for the device to come online, delivered with offline="1". */
  queue: BinaryNode[];
  /**
   * Message stanzas written to the device's connection that it has not receipted yet, by
   * message id in sending order (a retry resend shares its original's id). Not stored: a
   * snapshot puts them back at the front of `queue`.
   */
  unreceipted: Map<string, BinaryNode[]>;
}

/** What the simulated phone (device 0) received, decrypted, for GET /phones/:phone/messages. */
export interface PhoneInboxEntry {
  id: string;
  from: string;
  /** The group JID of a group message; those are kept without their content (`text` null, `type` "group"). */
  chat?: string;
  text: string | null;
  type: string;
  timestamp: number;
}

/** Device 0: the simulated phone with its own Signal identity and sessions. */
export interface PhoneIdentity {
  identity: KeyPair;
  registrationId: number;
  signedPreKey: { keyId: number; keyPair: KeyPair; signature: Buffer };
  /** libsignal session records by "name.device", serialized. */
  sessions: Map<string, unknown>;
  inbox: PhoneInboxEntry[];
  /** Ciphertexts from other numbers' companions, decrypted in order when the inbox is read. */
  undecrypted: PendingCiphertext[];
  /** The conversations the phone keeps, by chat JID: what its history syncs carry (phone/history.ts). */
  chats: Map<string, PhoneChat>;
}

/** One message a phone keeps in a conversation. */
export interface PhoneHistoryMessage {
  id: string;
  fromMe: boolean;
  /** Unix seconds. */
  timestamp: number;
  /** The message, encoded (proto.Message). */
  content: Buffer;
}

/** A conversation as the phone keeps it, oldest message first. */
export interface PhoneChat {
  jid: string;
  /** The name saved in the phone's address book (or a group's subject). */
  name?: string;
  /** The person's own push name, when the phone knows it. */
  pushName?: string;
  unread: number;
  messages: PhoneHistoryMessage[];
}

interface PendingCiphertext {
  id: string;
  senderPhone: string;
  senderDevice: number;
  type: string;
  ciphertext: Buffer;
  timestamp: number;
  /** A group message (not decrypted: the phones keep no sender keys). */
  group?: string;
}

export interface Account {
  phone: string;
  lid: string;
  pushName: string;
  createdAt: number;
  nextDevice: number;
  nextKeyIndex: number;
  phoneIdentity: PhoneIdentity;
  devices: Map<number, CompanionDevice>;
}

export const INBOX_LIMIT = 1000;
export const UNDECRYPTED_LIMIT = 5000;
