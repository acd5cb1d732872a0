import { randomBytes } from 'node:crypto';
import { proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { SignedPreKeyRecord } from './model.js';
import { uintBE } from '../handlers/context.js';

/** What a companion registers with (validate-connection.js:77-127). */
export interface Registration {
  noiseKey: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: SignedPreKeyRecord;
  platform: string;
  /** The companion asked for the full history (Baileys' `syncFullHistory` sets DeviceProps.requireFullSync). */
  fullSync: boolean;
}

/** Validates a registration payload; throws on anything incomplete (the connection closes). */
export function parseRegistration(noiseKey: Buffer, data: proto.ClientPayload.IDevicePairingRegistrationData): Registration {
  const registrationId = uintBE(data.eRegid ? Buffer.from(data.eRegid) : undefined);
  const keyId = uintBE(data.eSkeyId ? Buffer.from(data.eSkeyId) : undefined);
  if (
    registrationId === undefined ||
    keyId === undefined ||
    data.eIdent?.length !== 32 ||
    data.eSkeyVal?.length !== 32 ||
    data.eSkeySig?.length !== 64
  ) {
    throw new Error('incomplete registration payload');
  }
  let platform = 'web';
  let fullSync = false;
  try {
    const props = data.deviceProps ? proto.DeviceProps.decode(data.deviceProps) : undefined;
    if (props?.os) platform = props.os.toLowerCase();
    fullSync = props?.requireFullSync === true;
  } catch {
    platform = 'web';
  }
  return {
    noiseKey,
    identityKey: Buffer.from(data.eIdent),
    registrationId,
    signedPreKey: { keyId, publicKey: Buffer.from(data.eSkeyVal), signature: Buffer.from(data.eSkeySig) },
    platform,
    fullSync,
  };
}

/** A registering companion, waiting for a phone to scan one of its QR refs. */
export interface PendingCompanion extends Registration {
  send(node: BinaryNode): void;
  kick(error?: BinaryNode): void;
  /** Resolves with the client's reply to an iq this server sent (pair-success). */
  awaitReply(iqId: string, timeoutMs: number): Promise<BinaryNode>;
  /** Set while a scan is linking this companion (one scan wins). */
  linking: boolean;
  /** Set once the companion asked to be linked by code (`companion_hello`). */
  codeLink?: CodeLinkRequest;
  /** Receives the companion's `companion_finish` iq while a phone is linking it by code. */
  onCodeFinish?: (iq: BinaryNode) => void;
}

/** A companion's `companion_hello`: which number it wants, and its ephemeral key wrapped under the code. */
export interface CodeLinkRequest {
  phone: string;
  ref: string;
  wrappedEphemeral: Buffer;
  expiresAt: number;
}

export class PairingError extends Error {
  override name = 'PairingError';
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 | 504,
  ) {
    super(message);
  }
}

/**
 * QR refs of every registering connection (a scan finds its companion in O(1)), and the
 * companions waiting for a code, by the number they asked for (the phone entering a code
 * finds them by its own number).
 */
export class PairingRegistry {
  private readonly byRef = new Map<string, PendingCompanion>();
  private readonly refsOf = new Map<PendingCompanion, string[]>();
  private readonly byPhone = new Map<string, Set<PendingCompanion>>();

  issueRefs(companion: PendingCompanion, count: number): string[] {
    const refs = Array.from({ length: count }, () => `2@${randomBytes(24).toString('base64')}`);
    for (const ref of refs) this.byRef.set(ref, companion);
    this.refsOf.set(companion, refs);
    return refs;
  }

  find(ref: string): PendingCompanion | undefined {
    return this.byRef.get(ref);
  }

  /** Records (or replaces, when the companion asks again) its request to be linked by code. */
  awaitCode(companion: PendingCompanion, request: CodeLinkRequest): void {
    this.forgetCode(companion);
    companion.codeLink = request;
    const waiting = this.byPhone.get(request.phone) ?? new Set();
    waiting.add(companion);
    this.byPhone.set(request.phone, waiting);
  }

  /** Companions waiting for a code from `phone`, newest request first, expired ones dropped. */
  waitingForCode(phone: string, now = Date.now()): PendingCompanion[] {
    const waiting = [...(this.byPhone.get(phone) ?? [])];
    for (const companion of waiting) if ((companion.codeLink?.expiresAt ?? 0) <= now) this.forgetCode(companion);
    return waiting
      .filter((c) => (c.codeLink?.expiresAt ?? 0) > now)
      .sort((a, b) => (b.codeLink?.expiresAt ?? 0) - (a.codeLink?.expiresAt ?? 0));
  }

  forget(companion: PendingCompanion): void {
    for (const ref of this.refsOf.get(companion) ?? []) this.byRef.delete(ref);
    this.refsOf.delete(companion);
    this.forgetCode(companion);
  }

  private forgetCode(companion: PendingCompanion): void {
    const phone = companion.codeLink?.phone;
    if (phone === undefined) return;
    const waiting = this.byPhone.get(phone);
    waiting?.delete(companion);
    if (waiting?.size === 0) this.byPhone.delete(phone);
    companion.codeLink = undefined;
  }
}
