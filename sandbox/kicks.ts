import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Network } from './network/network.js';
import type { Account } from './network/model.js';
import { unlinkDevice } from './network/unlink.js';

export const KICK_KINDS = ['restart', 'conflict', 'end', 'logout', 'forbidden'] as const;
export type KickKind = (typeof KICK_KINDS)[number];

/**
 * What each kick sends before closing, and the close code Baileys reports: restart 515,
 * conflict 440 (replaced), end 428 (connection closed), logout 401 (device removed),
 * forbidden 403 (the login failure WhatsApp sends once it removed the account).
 */
const KICK_STANZAS: Record<KickKind, BinaryNode> = {
  restart: { tag: 'stream:error', attrs: { code: '515' } },
  conflict: { tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] },
  end: { tag: 'xmlstreamend', attrs: {} },
  logout: { tag: 'stream:error', attrs: { code: '401' }, content: [{ tag: 'conflict', attrs: { type: 'device_removed' } }] },
  forbidden: { tag: 'failure', attrs: { reason: '403', location: 'sandbox' } },
};

/** Kinds after which the device's credentials stop working: it is unlinked. */
const UNLINKING: ReadonlySet<KickKind> = new Set(['logout', 'forbidden']);

export interface KickOutcome {
  device: number;
  /** It was online and its connection was closed. */
  kicked: boolean;
  unlinked: boolean;
}

/** Kicks a device; `logout` and `forbidden` also unlink it. */
export function kickDevice(network: Network, account: Account, device: number, kind: KickKind): KickOutcome {
  const kicked = network.kick(account.phone, device, KICK_STANZAS[kind]);
  const unlinked = UNLINKING.has(kind) ? unlinkDevice(network, account, device) : false;
  return { device, kicked, unlinked };
}

/** Kicks every linked device of the account. */
export function kickAllDevices(network: Network, account: Account, kind: KickKind): KickOutcome[] {
  return [...account.devices.keys()].map((device) => kickDevice(network, account, device, kind));
}
