import type { BinaryNode } from '@whiskeysockets/baileys';
import { child, children, iqError, iqResult, type StanzaContext } from '../handlers/context.js';
import { groupJid, isAdmin, newInviteCode, parseGroupJid, type Group } from './model.js';
import { descriptionNode, groupNode, participantNode } from './nodes.js';
import { notifyGroup } from './notify.js';
import { changeParticipants, PARTICIPANT_ACTIONS, type ParticipantAction } from './participants.js';

/** WhatsApp's limits: subject 100 characters, description 2048 (longer is refused, not cut). */
const SUBJECT_MAX = 100;
const DESCRIPTION_MAX = 2048;

const textOf = (node: BinaryNode | undefined): string | undefined =>
  node?.content instanceof Uint8Array
    ? Buffer.from(node.content).toString('utf8')
    : typeof node?.content === 'string'
      ? node.content
      : undefined;

/**
 * xmlns="w:g2" (Baileys: Socket/groups.js). To `@g.us`: create, participating, leave, and join
 * by invite code; to a group JID: metadata, participants, subject, description, invite code.
 * A group the network does not have is 404, one the requester is not in 403, an admin-only
 * change by a plain member 401; anything else about a group (settings, ephemeral) is accepted
 * without effect.
 */
export function handleGroupIq(ctx: StanzaContext, iq: BinaryNode): void {
  const first = children(iq)[0];
  if (iq.attrs.to === '@g.us') return handleGroupsIq(ctx, iq, first);
  const group = ctx.network.groups.get(parseGroupJid(iq.attrs.to) ?? '');
  if (!group) return ctx.send(iqError(iq, 404, 'item-not-found'));
  const me = ctx.account.phone;
  if (!group.participants.has(me)) return ctx.send(iqError(iq, 403, 'forbidden'));
  const tag = first?.tag ?? '';
  if (iq.attrs.type === 'get' && tag === 'query') {
    ctx.network.groups.countMetadataQuery(me);
    return ctx.send(iqResult(iq, [groupNode(ctx.network, group)]));
  }
  if (iq.attrs.type === 'get' && tag === 'invite') {
    if (!isAdmin(group, me)) return ctx.send(iqError(iq, 401, 'not-authorized'));
    return ctx.send(iqResult(iq, [{ tag: 'invite', attrs: { code: group.inviteCode } }]));
  }
  if (iq.attrs.type !== 'set' || !first) return ctx.send(iqResult(iq));
  if ((PARTICIPANT_ACTIONS as readonly string[]).includes(tag)) {
    if (!isAdmin(group, me)) return ctx.send(iqError(iq, 401, 'not-authorized'));
    return ctx.send(iqResult(iq, [changeParticipants(ctx.network, group, me, tag as ParticipantAction, first)]));
  }
  switch (tag) {
    case 'subject':
      return setSubject(ctx, iq, group, textOf(first));
    case 'description':
      return setDescription(ctx, iq, group, first);
    case 'invite': {
      // A set on the group's invite revokes the code: the old link stops working.
      if (!isAdmin(group, me)) return ctx.send(iqError(iq, 401, 'not-authorized'));
      group.inviteCode = newInviteCode();
      ctx.network.groups.changed();
      ctx.send(iqResult(iq, [{ tag: 'invite', attrs: { code: group.inviteCode } }]));
      notifyGroup(ctx.network, group, me, { tag: 'invite', attrs: { code: group.inviteCode } });
      return;
    }
    default:
      return ctx.send(iqResult(iq));
  }
}

function handleGroupsIq(ctx: StanzaContext, iq: BinaryNode, first: BinaryNode | undefined): void {
  const { network } = ctx;
  const me = ctx.account.phone;
  if (iq.attrs.type === 'get' && first?.tag === 'participating') {
    const groups = network.groups.of(me).map((g) => groupNode(network, g));
    return ctx.send(iqResult(iq, [{ tag: 'groups', attrs: {}, content: groups }]));
  }
  if (iq.attrs.type === 'set' && first?.tag === 'create') {
    const subject = first.attrs.subject ?? '';
    if (!subject.trim() || [...subject].length > SUBJECT_MAX) return ctx.send(iqError(iq, 400, 'bad-request'));
    // Numbers the network does not know are left out, as WhatsApp leaves out who cannot be added.
    const members: string[] = [];
    for (const p of children(first)) {
      const resolved = p.tag === 'participant' ? network.accounts.resolve(p.attrs.jid) : undefined;
      if (resolved) members.push(resolved.account.phone);
    }
    const group = network.groups.create(me, subject, members);
    const node = groupNode(network, group);
    ctx.send(iqResult(iq, [node]));
    notifyGroup(network, group, me, { tag: 'create', attrs: {}, content: [node] });
    return;
  }
  if (iq.attrs.type === 'set' && first?.tag === 'leave') {
    const left: BinaryNode[] = [];
    for (const g of children(first)) {
      const group = network.groups.get(parseGroupJid(g.attrs.id) ?? parseGroupJid(`${g.attrs.id}@g.us`) ?? '');
      if (!group?.participants.has(me)) continue;
      network.groups.leave(group, me);
      left.push({ tag: 'group', attrs: { id: groupJid(group.id) } });
      // WhatsApp announces a departure as the member removing itself (Baileys maps it to "leave").
      notifyGroup(network, group, me, { tag: 'remove', attrs: {}, content: [participantNode(network, me)] }, [me]);
    }
    return ctx.send(iqResult(iq, [{ tag: 'leave', attrs: {}, content: left }]));
  }
  if (first?.tag === 'invite' && first.attrs.code) {
    // Invite codes are looked up rarely (a join by link): a scan of the groups is enough.
    const group = [...network.groups.all()].find((g) => g.inviteCode === first.attrs.code);
    if (!group) return ctx.send(iqError(iq, 404, 'item-not-found'));
    if (iq.attrs.type === 'get') return ctx.send(iqResult(iq, [groupNode(network, group)]));
    if (!group.participants.has(me)) {
      network.groups.join(group, me);
      notifyGroup(network, group, me, { tag: 'add', attrs: { reason: 'invite' }, content: [participantNode(network, me)] });
    }
    return ctx.send(iqResult(iq, [{ tag: 'group', attrs: { jid: groupJid(group.id) } }]));
  }
  ctx.send(iqResult(iq));
}

function setSubject(ctx: StanzaContext, iq: BinaryNode, group: Group, subject: string | undefined): void {
  if (!subject?.trim() || [...subject].length > SUBJECT_MAX) return ctx.send(iqError(iq, 400, 'bad-request'));
  const me = ctx.account.phone;
  group.subject = subject;
  group.subjectOwner = me;
  group.subjectTime = Math.floor(Date.now() / 1000);
  ctx.network.groups.changed();
  ctx.send(iqResult(iq));
  notifyGroup(ctx.network, group, me, { tag: 'subject', attrs: { subject, s_t: String(group.subjectTime) } });
}

function setDescription(ctx: StanzaContext, iq: BinaryNode, group: Group, node: BinaryNode): void {
  const me = ctx.account.phone;
  const text = textOf(child(node, 'body'));
  if (node.attrs.delete === 'true' || !text) {
    group.description = undefined;
    ctx.network.groups.changed();
    ctx.send(iqResult(iq));
    notifyGroup(ctx.network, group, me, { tag: 'description', attrs: { delete: 'true' } });
    return;
  }
  if ([...text].length > DESCRIPTION_MAX) return ctx.send(iqError(iq, 400, 'bad-request'));
  group.description = { id: node.attrs.id ?? Date.now().toString(16), text, owner: me, time: Math.floor(Date.now() / 1000) };
  ctx.network.groups.changed();
  ctx.send(iqResult(iq));
  notifyGroup(ctx.network, group, me, descriptionNode(ctx.network, group.description));
}
