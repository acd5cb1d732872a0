import { readFileSync } from 'node:fs';
import { Agent as HttpsAgent } from 'node:https';
import type { SocketConfig } from '@whiskeysockets/baileys';
import { Agent as UndiciAgent } from 'undici';
import type { Config } from '../../core/config.js';
import type { TargetPolicy } from '../../core/net/address-policy.js';
import { ConfigError } from '../../core/config.js';

/**
 * Where the sockets connect. Against real WhatsApp nothing is overridden. Against a sandbox
 * network (all of WA_WS_URL, WA_ROOT_PUBLIC_KEY, WA_MEDIA_CA_FILE set) the socket URL, the
 * certificate root Baileys checks during the Noise handshake, and the CA trusted for media
 * uploads and downloads all point at the sandbox.
 */
export interface NetworkOptions {
  mode: 'whatsapp' | 'sandbox';
  /** `qrTimeout` (how long each QR lives) is left to Baileys except in tests, which shorten it. */
  socket: Partial<Pick<SocketConfig, 'waWebSocketUrl' | 'agent' | 'fetchAgent' | 'qrTimeout'>>;
  /**
   * The certificate root Baileys checks during the Noise handshake, when not WhatsApp's own. Set
   * into Baileys' WA_CERT_DETAILS when Baileys is loaded (connector/session/load-account-session.ts): an
   * empty connector does not load Baileys.
   */
  rootPublicKey?: Buffer<ArrayBuffer>;
  /** For `downloadMediaMessage(..., {options: {dispatcher}})`; undefined uses the default trust store. */
  downloadDispatcher?: FetchDispatcher;
  /** The CA of the sandbox's media host, for the TLS inside a proxy's tunnel; undefined: the default store. */
  mediaCa?: string;
  /** Which addresses an account's proxy may be at (the webhook targets' policy, WEBHOOK_ALLOW_PRIVATE included). */
  proxyPolicy: TargetPolicy;
}

/** The dispatcher type of Node's global fetch (Baileys downloads with it). */
export type FetchDispatcher = NonNullable<RequestInit['dispatcher']>;

type NetworkConfig = Pick<Config, 'WA_WS_URL' | 'WA_ROOT_PUBLIC_KEY' | 'WA_MEDIA_CA_FILE' | 'WEBHOOK_ALLOW_PRIVATE'>;

export function networkOptionsFrom(config: NetworkConfig): NetworkOptions {
  const { WA_WS_URL: wsUrl, WA_ROOT_PUBLIC_KEY: rootKey, WA_MEDIA_CA_FILE: caFile } = config;
  const proxyPolicy = { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE };
  const given = [wsUrl, rootKey, caFile].filter(Boolean).length;
  if (given === 0) return { mode: 'whatsapp', socket: {}, proxyPolicy };
  if (!wsUrl || !rootKey || !caFile) {
    throw new ConfigError('Sandbox mode needs all of WA_WS_URL, WA_ROOT_PUBLIC_KEY and WA_MEDIA_CA_FILE');
  }
  const ca = readFileSync(caFile, 'utf8');
  return {
    mode: 'sandbox',
    proxyPolicy,
    mediaCa: ca,
    rootPublicKey: Buffer.from(rootKey, 'hex'),
    socket: { waWebSocketUrl: wsUrl, fetchAgent: new HttpsAgent({ ca, keepAlive: true }) },
    // undici's Agent and Node's bundled undici-types describe the same dispatch interface with
    // slightly different FormData types; the global fetch accepts it at runtime.
    downloadDispatcher: new UndiciAgent({ connect: { ca } }) as unknown as FetchDispatcher,
  };
}
