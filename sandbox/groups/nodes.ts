import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Network } from '../network/network.js';
import { lidJid, pnJid } from '../network/jids.js';
import type { Group, GroupRole } from './model.js';

const lidAddressed = (network: Network) => network.addressing === 'lid';

/**
 * How a group names a member: by phone number with its `lid` (the default), or by LID with its
 * `phone_number` when the network delivers LID-addressed (Baileys reads both, groups.js
 * extractGroupMetadata).
 */
function memberAttrs(network: Network, phone: string): Record<string, string> {
  const account = network.accounts.get(phone);
  if (!account) return { jid: pnJid(phone) };
  return lidAddressed(network) ? { jid: lidJid(account.lid), phone_number: pnJid(phone) } : { jid: pnJid(phone), lid: lidJid(account.lid) };
}

/** The member's JID (user, or one device) in the group's addressing. */
export function memberJid(network: Network, phone: string, device = 0): string {
  const account = network.accounts.get(phone);
  return account && lidAddressed(network) ? lidJid(account.lid, device) : pnJid(phone, device);
}

export function participantNode(network: Network, phone: string, role: GroupRole = null): BinaryNode {
  return { tag: 'participant', attrs: { ...memberAttrs(network, phone), ...(role ? { type: role } : {}) } };
}

/** `<group>` as the metadata query, `participating` and the `create` notification carry it. */
export function groupNode(network: Network, group: Group): BinaryNode {
  const creator = memberAttrs(network, group.creator);
  const attrs: Record<string, string> = {
    id: group.id,
    subject: group.subject,
    s_o: memberJid(network, group.subjectOwner),
    s_t: String(group.subjectTime),
    creation: String(group.creation),
    creator: creator.jid ?? '',
    size: String(group.participants.size),
  };
  if (lidAddressed(network)) {
    attrs.addressing_mode = 'lid';
    if (creator.phone_number) attrs.creator_pn = creator.phone_number;
  }
  const content: BinaryNode[] = [];
  if (group.description) content.push(descriptionNode(network, group.description));
  for (const [phone, role] of group.participants) content.push(participantNode(network, phone, role));
  return { tag: 'group', attrs, content };
}

export function descriptionNode(network: Network, description: NonNullable<Group['description']>): BinaryNode {
  return {
    tag: 'description',
    attrs: { id: description.id, t: String(description.time), participant: memberJid(network, description.owner) },
    content: [{ tag: 'body', attrs: {}, content: Buffer.from(description.text, 'utf8') }],
  };
}
