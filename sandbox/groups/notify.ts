import { randomBytes } from 'node:crypto';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Network } from '../network/network.js';
import { lidJid, pnJid } from '../network/jids.js';
import { groupJid, type Group } from './model.js';

/**
 * A `w:gp2` notification about `group` (Baileys: messages-recv.js handleGroupNotification) to
 * every linked device of every member and of `alsoTo` (e.g. who was just removed), queued for
 * devices that are offline. `participant` names who acted, with the other addressing alongside.
 */
export function notifyGroup(network: Network, group: Group, actor: string, change: BinaryNode, alsoTo: readonly string[] = []): void {
  const account = network.accounts.get(actor);
  const attrs: Record<string, string> = {
    from: groupJid(group.id),
    type: 'w:gp2',
    id: randomBytes(8).toString('hex').toUpperCase(),
    t: String(Math.floor(Date.now() / 1000)),
  };
  if (account) {
    Object.assign(
      attrs,
      network.addressing === 'lid'
        ? { participant: lidJid(account.lid), participant_pn: pnJid(actor) }
        : { participant: pnJid(actor), participant_lid: lidJid(account.lid) },
    );
  }
  const notification: BinaryNode = { tag: 'notification', attrs, content: [change] };
  for (const phone of new Set([...group.participants.keys(), ...alsoTo])) {
    const member = network.accounts.get(phone);
    if (!member) continue;
    for (const device of member.devices.keys()) network.deliver(member, device, notification);
  }
}
