import type { BinaryNode } from '@whiskeysockets/baileys';
import { child, children, type StanzaContext } from '../handlers/context.js';
import { lidJid, pnJid } from '../network/jids.js';
import type { Account } from '../network/model.js';
import { groupJid, parseGroupJid, type Group } from './model.js';
import { memberJid } from './nodes.js';
import { sendGroupReceipt } from './receipts.js';
import { sendNack } from '../network/send-limits.js';

const ROUTED_ATTRS = ['type', 'edit', 'category', 'push_priority', 'mediatype'] as const;

/**
 * A companion's `<message to="G@g.us">` (Baileys: messages-send.js relayMessage, group branch):
 * one `<enc type="skmsg">` for everybody, encrypted once with the sender key, plus in
 * `<participants>` a pairwise `pkmsg`/`msg` carrying the sender-key distribution for each
 * device that does not have the key yet. Every device of every member but the sending one gets
 * `<message from="G@g.us" participant="SENDER:DEV" …>` with its own distribution part (if any)
 * first, then the skmsg. A retry resend (`participant` set, a single pairwise `<enc>`) goes to
 * that device only. Each member's phone acknowledges delivery at once, as WhatsApp's phones do,
 * and keeps the message (undecrypted) so that the control API can read it.
 */
export function handleGroupMessage(ctx: StanzaContext, node: BinaryNode): void {
  const { network } = ctx;
  const id = node.attrs.id;
  const to = node.attrs.to ?? '';
  if (!id) return;
  const t = String(Math.floor(Date.now() / 1000));
  const group = network.groups.get(parseGroupJid(to) ?? '');
  const me = ctx.account.phone;
  if (!group?.participants.has(me)) {
    ctx.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t, error: group ? '403' : '404' } });
    return;
  }
  // A retry resend names its one device in `participant`: not a new send, never refused.
  const verdict = node.attrs.participant ? undefined : network.sendLimits.take(me);
  if (verdict?.kind === 'refuse') {
    sendNack(ctx, { tag: 'ack', attrs: { class: 'message', id, from: to, t, error: String(verdict.error) } }, verdict.delayMs);
    return;
  }
  network.rememberOrigin(id, { phone: me, device: ctx.device });
  if (verdict?.kind !== 'withhold_ack') ctx.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t } });

  const attrs = senderAttrs(ctx, group, node, id, t);
  const deviceIdentity = child(node, 'device-identity');
  const encs = children(node).filter((c) => c.tag === 'enc');
  const skmsg = encs.find((e) => e.attrs.type === 'skmsg');
  const retryTarget = node.attrs.participant ? network.accounts.resolve(node.attrs.participant) : undefined;
  if (!skmsg) {
    if (retryTarget && group.participants.has(retryTarget.account.phone) && encs[0]) {
      deliverTo(ctx, retryTarget.account, retryTarget.device, attrs, [encs[0], ...(deviceIdentity ? [deviceIdentity] : [])]);
    }
    return;
  }
  const pairwise = new Map<string, BinaryNode>();
  for (const to of children(child(node, 'participants'))) {
    const resolved = to.tag === 'to' ? network.accounts.resolve(to.attrs.jid) : undefined;
    const enc = child(to, 'enc');
    if (resolved && enc) pairwise.set(`${resolved.account.phone}:${resolved.device}`, enc);
  }
  for (const phone of group.participants.keys()) {
    const member = network.accounts.get(phone);
    if (!member) continue;
    network.notePeers(ctx.account, member);
    if (member !== ctx.account) sendGroupReceipt(network, group, id, member, 0, {});
    // The phone (device 0) is not among the companions: it gets its copy too.
    for (const device of [0, ...member.devices.keys()]) {
      if (member === ctx.account && device === ctx.device) continue;
      const own = pairwise.get(`${phone}:${device}`);
      const content = own ? [own, skmsg, ...(deviceIdentity ? [deviceIdentity] : [])] : [skmsg];
      deliverTo(ctx, member, device, attrs, content);
    }
  }
}

/** The attributes every copy shares: the group as `from`, the sending device as `participant`. */
function senderAttrs(ctx: StanzaContext, group: Group, node: BinaryNode, id: string, t: string): Record<string, string> {
  const { network, account } = ctx;
  const lid = network.addressing === 'lid';
  const attrs: Record<string, string> = {
    from: groupJid(group.id),
    id,
    t,
    participant: memberJid(network, account.phone, ctx.device),
    ...(lid ? { participant_pn: pnJid(account.phone), addressing_mode: 'lid' } : { participant_lid: lidJid(account.lid) }),
    notify: account.pushName,
  };
  for (const name of ROUTED_ATTRS) {
    const value = node.attrs[name];
    if (value) attrs[name] = value;
  }
  return attrs;
}

function deliverTo(ctx: StanzaContext, account: Account, device: number, attrs: Record<string, string>, encs: BinaryNode[]): void {
  const content = encs.map((e) => (e.tag === 'enc' ? { tag: 'enc', attrs: { ...e.attrs }, content: e.content } : e));
  const stanza: BinaryNode = { tag: 'message', attrs, content };
  if (device === 0) ctx.phones.receiveGroup(account, ctx.account, ctx.device, attrs.from ?? '', stanza);
  else ctx.network.deliver(account, device, stanza);
}
