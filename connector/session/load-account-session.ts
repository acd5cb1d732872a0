import type { NetworkOptions } from '../network/network-options.js';
import type { AccountSession } from './account-session.js';

/**
 * The session code, loaded when the first account starts: it loads Baileys (its protobuf
 * definitions, libsignal, the Rust bridge: ~40 MB of RSS) that a connector with no account to
 * own never needs. The sandbox's certificate root goes into Baileys' WA_CERT_DETAILS before any
 * socket exists: Baileys reads that process-wide object at handshake time, which is fine because
 * one connector process talks to one network.
 */
export async function loadAccountSession(network: NetworkOptions): Promise<typeof AccountSession> {
  const [sessionModule, baileys] = await Promise.all([import('./account-session.js'), import('@whiskeysockets/baileys')]);
  if (network.rootPublicKey) baileys.WA_CERT_DETAILS.PUBLIC_KEY = network.rootPublicKey;
  return sessionModule.AccountSession;
}
