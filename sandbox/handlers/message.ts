import type { BinaryNode } from '@whiskeysockets/baileys';
import { child, children, type StanzaContext } from './context.js';
import { parseUserJid, pnJid } from '../network/jids.js';
import { handleGroupMessage } from '../groups/fanout.js';
import { parseGroupJid } from '../groups/model.js';
import { sendNack } from '../network/send-limits.js';

const ROUTED_ATTRS = ['type', 'edit', 'category', 'push_priority', 'mediatype'] as const;

/**
 * A companion's `<message>`: every `<to jid>` copy (or the single `<enc>` of a retry resend or
 * a peer message) goes to that device as `<message from="SENDER:DEV" ...>`; copies for the
 * sender's own devices carry `recipient`. The sender gets a server ack (messages-send.js:428-884),
 * or, when the control API asked for it (network/send-limits.ts), a nack and no delivery at all.
 */
export function handleMessage(ctx: StanzaContext, node: BinaryNode): void {
  const id = node.attrs.id;
  const to = node.attrs.to;
  if (!id || !to) return;
  if (parseGroupJid(to)) return handleGroupMessage(ctx, node);
  const t = String(Math.floor(Date.now() / 1000));
  const destination = ctx.network.accounts.resolve(to);
  const deviceIdentity = child(node, 'device-identity');
  const targets: { jid: string; enc: BinaryNode }[] = [];
  for (const participant of children(child(node, 'participants'))) {
    const enc = child(participant, 'enc');
    if (participant.tag === 'to' && participant.attrs.jid && enc) targets.push({ jid: participant.attrs.jid, enc });
  }
  const directEnc = child(node, 'enc');
  // A retry resend (a single <enc>) or a peer message is not a new send: never refused.
  const verdict = directEnc || node.attrs.category === 'peer' ? undefined : ctx.network.sendLimits.take(ctx.account.phone);
  if (verdict?.kind === 'refuse') {
    // As WhatsApp: a nack instead of the fan-out; nobody receives the message.
    sendNack(ctx, { tag: 'ack', attrs: { class: 'message', id, from: to, t, error: String(verdict.error) } }, verdict.delayMs);
    return;
  }
  if (directEnc) {
    // A retry resend names the device in `to`; a peer message goes to our own phone.
    const jid = node.attrs.category === 'peer' ? pnJid(ctx.account.phone) : to;
    targets.push({ jid, enc: directEnc });
  }
  ctx.network.rememberOrigin(id, { phone: ctx.account.phone, device: ctx.device });
  if (destination) ctx.network.notePeers(ctx.account, destination.account);
  const recipientUser =
    node.attrs.recipient ??
    (destination ? ctx.network.jidOf(destination.account, 0, parseUserJid(to)?.server === 'lid' || ctx.network.addressing === 'lid') : to);
  // The server ack goes first: a receipt (e.g. from a phone) must not overtake it.
  if (verdict?.kind !== 'withhold_ack') ctx.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t } });

  for (const { jid, enc } of targets) {
    const target = ctx.network.accounts.resolve(jid);
    if (!target) continue;
    const lidAddressed = target.server === 'lid' || ctx.network.addressing === 'lid';
    const attrs: Record<string, string> = {
      id,
      t,
      notify: ctx.account.pushName,
      ...ctx.network.senderAttrs(ctx.account, ctx.device, lidAddressed),
    };
    for (const name of ROUTED_ATTRS) {
      const value = node.attrs[name];
      if (value) attrs[name] = value;
    }
    if (target.account === ctx.account && node.attrs.category !== 'peer') attrs.recipient = recipientUser;
    const content: BinaryNode[] = [{ tag: 'enc', attrs: { ...enc.attrs }, content: enc.content }];
    if (deviceIdentity) content.push(deviceIdentity);
    const stanza: BinaryNode = { tag: 'message', attrs, content };
    if (target.device === 0) {
      ctx.phones.receive(target.account, ctx.account, ctx.device, stanza);
    } else if (!(target.account === ctx.account && target.device === ctx.device)) {
      ctx.network.deliver(target.account, target.device, stanza);
    }
  }
}
