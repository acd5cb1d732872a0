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

/**
 * Partial SocketConfig: the chat endpoint, an HTTPS agent that trusts the media host (uploads),
 * and the fetch options Baileys downloads history syncs with (sandboxMediaDownloadOptions).
 */
export function sandboxSocketOptions(
  descriptor: SandboxDescriptor,
): Pick<UserFacingSocketConfig, 'waWebSocketUrl' | 'fetchAgent' | 'options'> {
  trustSandboxRoot(descriptor);
  const ca = readFileSync(descriptor.mediaCaFile, 'utf8');
  return { waWebSocketUrl: descriptor.wsUrl, fetchAgent: new HttpsAgent({ ca }), options: sandboxMediaDownloadOptions(descriptor) };
}

/** Where Baileys downloads what a message names only by its `directPath` (history syncs): Utils/messages-media.js DEF_MEDIA_HOST. */
const WHATSAPP_MEDIA_ORIGIN = 'https://mmg.whatsapp.net';

/**
 * The fetch options for `downloadMediaMessage(msg, type, {options})`,
 * `downloadContentFromMessage(..., {options})` and Baileys' socket `options` (history downloads):
 * an undici dispatcher that trusts the media CA and sends what is asked of WhatsApp's default
 * media host to the sandbox's, as DNS would send it to WhatsApp's.
 */
export function sandboxMediaDownloadOptions(descriptor: SandboxDescriptor): RequestInit {
  const ca = readFileSync(descriptor.mediaCaFile, 'utf8');
  const agent = new UndiciAgent({ connect: { ca } });
  const mediaUrl = descriptor.mediaUrl;
  const dispatcher = mediaUrl
    ? agent.compose((dispatch) => (options, handler) => {
        const toWhatsApp = options.origin !== undefined && new URL(String(options.origin)).origin === WHATSAPP_MEDIA_ORIGIN;
        return dispatch(toWhatsApp ? { ...options, origin: mediaUrl } : options, handler);
      })
    : agent;
  // Node's fetch takes an undici dispatcher; the undici package and Node's bundled undici-types
  // declare the Dispatcher class separately, so the types do not line up although it works.
  return { dispatcher } as unknown as RequestInit;
}
