import type { BinaryNode } from '@whiskeysockets/baileys';
import { children } from '../handlers/context.js';
import type { Network } from '../network/network.js';
import type { Group } from './model.js';
import { participantNode } from './nodes.js';
import { notifyGroup } from './notify.js';

export const PARTICIPANT_ACTIONS = ['add', 'remove', 'promote', 'demote'] as const;
export type ParticipantAction = (typeof PARTICIPANT_ACTIONS)[number];

/**
 * Per-JID codes in the answer, as `error` on each `<participant>` (Baileys reads it as the
 * status, '200' when absent): 404 not on the network (add) or not in the group, 409 already
 * in the group, 406 the creator cannot be removed or demoted by someone else.
 */
function refusal(group: Group, actor: string, action: ParticipantAction, phone: string | undefined): string | undefined {
  if (!phone) return '404';
  const member = group.participants.has(phone);
  if (action === 'add') return member ? '409' : undefined;
  if (!member) return '404';
  if ((action === 'remove' || action === 'demote') && group.participants.get(phone) === 'superadmin' && phone !== actor) return '406';
  return undefined;
}

/**
 * An admin's add/remove/promote/demote (`<action><participant jid/>…`): each JID is applied or
 * refused on its own; the members, the added and the removed hear of what changed in one
 * notification. Answers the `<action>` node with one `<participant>` per requested JID.
 */
export function changeParticipants(
  network: Network,
  group: Group,
  actor: string,
  action: ParticipantAction,
  request: BinaryNode,
): BinaryNode {
  const results: BinaryNode[] = [];
  const changed: string[] = [];
  for (const p of children(request)) {
    if (p.tag !== 'participant' || !p.attrs.jid) continue;
    const phone = network.accounts.resolve(p.attrs.jid)?.account.phone;
    const error = refusal(group, actor, action, phone);
    results.push({ tag: 'participant', attrs: { jid: p.attrs.jid, ...(error ? { error } : {}) } });
    if (error || !phone || changed.includes(phone)) continue;
    changed.push(phone);
    if (action === 'add') network.groups.join(group, phone);
    else if (action === 'remove') network.groups.leave(group, phone);
    else group.participants.set(phone, action === 'promote' ? 'admin' : null);
  }
  if (action === 'promote' || action === 'demote') network.groups.changed();
  if (changed.length) {
    const nodes = changed.map((phone) => participantNode(network, phone, action === 'add' ? null : undefined));
    notifyGroup(network, group, actor, { tag: action, attrs: {}, content: nodes }, action === 'remove' ? changed : []);
  }
  return { tag: action, attrs: {}, content: results };
}
