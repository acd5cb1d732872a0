import type { BinaryNode } from '@whiskeysockets/baileys';
import type { StanzaContext } from '../handlers/context.js';
import type { Network } from '../network/network.js';
import type { Account } from '../network/model.js';
import { groupJid, parseGroupJid, type Group } from './model.js';
import { memberJid } from './nodes.js';

/** Receipt types the sender hears once per message and member, whatever the member's device count. */
const ONCE_PER_MEMBER = new Set(['delivery', 'read', 'played']);
const LEDGER_LIMIT = 200_000;

/** Which (message, member, type) receipts the sender has already been told about. */
export class GroupReceiptLedger {
  private readonly seen = new Set<string>();

  first(messageId: string, phone: string, type: string): boolean {
    if (!ONCE_PER_MEMBER.has(type)) return true;
    const key = `${messageId}|${phone}|${type}`;
    if (this.seen.has(key)) return false;
    if (this.seen.size >= LEDGER_LIMIT) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    this.seen.add(key);
    return true;
  }
}

/**
 * A member's device receipted a group message (`<receipt to="G@g.us" participant="SENDER">`):
 * the device that sent it hears `<receipt from="G@g.us" participant="MEMBER" [type]>` once per
 * member and type (Baileys reports these as message-receipt.update per user). A retry receipt
 * names the asking device and keeps its keys, so the sender can resend to that device alone.
 */
export function handleGroupReceipt(ctx: StanzaContext, node: BinaryNode): void {
  const group = ctx.network.groups.get(parseGroupJid(node.attrs.to) ?? '');
  const id = node.attrs.id;
  if (!group || !id) return;
  sendGroupReceipt(ctx.network, group, id, ctx.account, ctx.device, node);
}

export function sendGroupReceipt(
  network: Network,
  group: Group,
  id: string,
  member: Account,
  memberDevice: number,
  receipt: Pick<BinaryNode, 'attrs' | 'content'> | Record<string, never>,
): boolean {
  const origin = network.originOf(id);
  const sender = origin ? network.accounts.get(origin.phone) : undefined;
  if (!origin || !sender || sender === member || origin.device === 0) return false;
  const received = receipt.attrs?.type;
  const type = !received || received === 'inactive' ? 'delivery' : received;
  if (!network.groupReceipts.first(id, member.phone, type)) return false;
  const attrs: Record<string, string> = {
    from: groupJid(group.id),
    id,
    t: receipt.attrs?.t ?? String(Math.floor(Date.now() / 1000)),
    participant: memberJid(network, member.phone, type === 'retry' ? memberDevice : 0),
  };
  if (type !== 'delivery') attrs.type = type;
  network.deliver(sender, origin.device, { tag: 'receipt', attrs, ...(receipt.content ? { content: receipt.content } : {}) });
  return true;
}
