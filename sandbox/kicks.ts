import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Network } from './network/network.js';
import type { Account } from './network/model.js';
import { unlinkDevice } from './network/unlink.js';

export const KICK_KINDS = ['restart', 'conflict', 'end', 'logout'] as const;
export type KickKind = (typeof KICK_KINDS)[number];

/** What each kick sends before closing; the close code Baileys reports is in docs/sandbox-protocol.md §7. */
const KICK_STANZAS: Record<KickKind, BinaryNode> = {
  restart: { tag: 'stream:error', attrs: { code: '515' } },
  conflict: { tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] },
  end: { tag: 'xmlstreamend', attrs: {} },
  logout: { tag: 'stream:error', attrs: { code: '401' }, content: [{ tag: 'conflict', attrs: { type: 'device_removed' } }] },
};

/** Kicks a device; `logout` also unlinks it, so its credentials stop working. */
export function kickDevice(network: Network, account: Account, device: number, kind: KickKind) {
  const kicked = network.kick(account.phone, device, KICK_STANZAS[kind]);
  const unlinked = kind === 'logout' ? unlinkDevice(network, account, device) : false;
  return { kicked, unlinked };
}
