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
  try {
    const props = data.deviceProps ? proto.DeviceProps.decode(data.deviceProps) : undefined;
    if (props?.os) platform = props.os.toLowerCase();
  } catch {
    platform = 'web';
  }
  return {
    noiseKey,
    identityKey: Buffer.from(data.eIdent),
    registrationId,
    signedPreKey: { keyId, publicKey: Buffer.from(data.eSkeyVal), signature: Buffer.from(data.eSkeySig) },
    platform,
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

/** QR refs of every registering connection: a scan finds its companion in O(1). */
export class PairingRegistry {
  private readonly byRef = new Map<string, PendingCompanion>();
  private readonly refsOf = new Map<PendingCompanion, string[]>();

  issueRefs(companion: PendingCompanion, count: number): string[] {
    const refs = Array.from({ length: count }, () => `2@${randomBytes(24).toString('base64')}`);
    for (const ref of refs) this.byRef.set(ref, companion);
    this.refsOf.set(companion, refs);
    return refs;
  }

  find(ref: string): PendingCompanion | undefined {
    return this.byRef.get(ref);
  }

  forget(companion: PendingCompanion): void {
    for (const ref of this.refsOf.get(companion) ?? []) this.byRef.delete(ref);
    this.refsOf.delete(companion);
  }
}
