import { randomInt } from 'node:crypto';
import { signedKeyPair } from '@whiskeysockets/baileys';
import { newKeyPair } from '../certs.js';
import type { Account, CompanionDevice, PhoneIdentity } from './model.js';
import { parseUserJid } from './jids.js';

class NotFoundError extends Error {
  override name = 'NotFoundError';
}

export interface ResolvedAddress {
  account: Account;
  device: number;
  server: 's.whatsapp.net' | 'lid';
}

function newPhoneIdentity(): PhoneIdentity {
  const identity = newKeyPair();
  const signed = signedKeyPair(identity, 1);
  const signedPair = { public: Buffer.from(signed.keyPair.public), private: Buffer.from(signed.keyPair.private) };
  return {
    identity,
    registrationId: randomInt(1, 16380),
    signedPreKey: { keyId: 1, keyPair: signedPair, signature: Buffer.from(signed.signature) },
    sessions: new Map(),
    inbox: [],
    undecrypted: [],
    chats: new Map(),
  };
}

/**
 * Every account of the network, indexed by phone number and by LID so that any JID resolves
 * in O(1). `onChange` is called after every mutation worth persisting.
 */
export class AccountRegistry {
  private readonly byPhone = new Map<string, Account>();
  private readonly byLid = new Map<string, Account>();

  constructor(private readonly onChange: () => void = () => {}) {}

  add(account: Account): void {
    this.byPhone.set(account.phone, account);
    this.byLid.set(account.lid, account);
  }

  create(phone: string, pushName?: string): { account: Account; created: boolean } {
    const existing = this.byPhone.get(phone);
    if (existing) {
      if (pushName && pushName !== existing.pushName) {
        existing.pushName = pushName;
        this.onChange();
      }
      return { account: existing, created: false };
    }
    const account: Account = {
      phone,
      lid: this.newLid(),
      pushName: pushName ?? `+${phone}`,
      createdAt: Date.now(),
      nextDevice: 1,
      nextKeyIndex: 1,
      phoneIdentity: newPhoneIdentity(),
      devices: new Map(),
    };
    this.add(account);
    this.onChange();
    return { account, created: true };
  }

  private newLid(): string {
    for (;;) {
      const lid = String(randomInt(10_000_000, 99_999_999)) + String(randomInt(1_000_000, 9_999_999));
      if (!this.byLid.has(lid)) return lid;
    }
  }

  get(phone: string): Account | undefined {
    return this.byPhone.get(phone);
  }

  require(phone: string): Account {
    const account = this.byPhone.get(phone);
    if (!account) throw new NotFoundError(`unknown phone ${phone}`);
    return account;
  }

  size(): number {
    return this.byPhone.size;
  }

  all(): IterableIterator<Account> {
    return this.byPhone.values();
  }

  /** Resolves a PN or LID JID (user or device) to its account. */
  resolve(jid: string | undefined): ResolvedAddress | undefined {
    const parsed = parseUserJid(jid);
    if (!parsed) return undefined;
    const account = parsed.server === 'lid' ? this.byLid.get(parsed.user) : this.byPhone.get(parsed.user);
    return account ? { account, device: parsed.device, server: parsed.server } : undefined;
  }

  /** Reserves the device id and key index a new companion will get. */
  reserveDevice(account: Account): { device: number; keyIndex: number } {
    const reserved = { device: account.nextDevice++, keyIndex: account.nextKeyIndex++ };
    this.onChange();
    return reserved;
  }

  linkDevice(account: Account, device: CompanionDevice): CompanionDevice {
    account.devices.set(device.device, device);
    this.onChange();
    return device;
  }

  unlinkDevice(account: Account, device: number): boolean {
    const removed = account.devices.delete(device);
    if (removed) this.onChange();
    return removed;
  }

  changed(): void {
    this.onChange();
  }
}
