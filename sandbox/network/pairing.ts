import { randomBytes } from 'node:crypto';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { SignedPreKeyRecord } from './model.js';

/** A registering companion, waiting for a phone to scan one of its QR refs. */
export interface PendingCompanion {
  noiseKey: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: SignedPreKeyRecord;
  platform: string;
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
