import { readFileSync } from 'node:fs';
import { Agent as HttpsAgent } from 'node:https';
import { WA_CERT_DETAILS, type UserFacingSocketConfig } from '@whiskeysockets/baileys';
import { Agent as UndiciAgent } from 'undici';
import type { SandboxDescriptor } from './index.js';

/**
 * Client-side glue for pointing an unmodified Baileys at the sandbox (tests, benchmarks, the
 * README). It trusts the sandbox's root key for the Noise certificate chain — Baileys reads the
 * mutable WA_CERT_DETAILS at handshake time, so this is process-wide — and its media CA.
 */
export function trustSandboxRoot(descriptor: Pick<SandboxDescriptor, 'rootPublicKey'>): void {
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(descriptor.rootPublicKey, 'hex');
}

/** Partial SocketConfig: the chat endpoint and an HTTPS agent that trusts the media host (uploads). */
export function sandboxSocketOptions(descriptor: SandboxDescriptor): Pick<UserFacingSocketConfig, 'waWebSocketUrl' | 'fetchAgent'> {
  trustSandboxRoot(descriptor);
  const ca = readFileSync(descriptor.mediaCaFile, 'utf8');
  return { waWebSocketUrl: descriptor.wsUrl, fetchAgent: new HttpsAgent({ ca }) };
}

/**
 * The fetch options for `downloadMediaMessage(msg, type, {options})` and
 * `downloadContentFromMessage(..., {options})`: an undici dispatcher that trusts the media CA.
 */
export function sandboxMediaDownloadOptions(descriptor: SandboxDescriptor): RequestInit {
  const ca = readFileSync(descriptor.mediaCaFile, 'utf8');
  // Node's fetch takes an undici dispatcher; the undici package and Node's bundled undici-types
  // declare the Dispatcher class separately, so the types do not line up although it works.
  return { dispatcher: new UndiciAgent({ connect: { ca } }) } as unknown as RequestInit;
}
