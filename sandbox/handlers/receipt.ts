import type { BinaryNode } from '@whiskeysockets/baileys';
import { child, children, type StanzaContext } from './context.js';
import { handleGroupReceipt } from '../groups/receipts.js';
import { parseGroupJid } from '../groups/model.js';
import { answerMediaRetry } from '../phone/media-retry.js';

/** Receipt types that concern only the receiving side; nothing goes back to the sender. */
const LOCAL_TYPES = new Set(['sender', 'peer_msg', 'hist_sync', 'read-self', 'server-error']);

/**
 * A device's receipt for messages it received: forward it to the device that sent them as
 * `<receipt from="B@s.whatsapp.net" id t [type]>` (no type = delivered). Retry receipts also
 * name the asking device in `participant` and carry its fresh keys.
 */
export function handleReceipt(ctx: StanzaContext, node: BinaryNode): void {
  const id = node.attrs.id;
  const type = node.attrs.type;
  if (!id) return;
  // A retry receipt asks for the message again: until it comes, the stanza stays kept.
  if (type !== 'retry') ctx.network.received(ctx.companion, [id, ...listedIds(node)]);
  // A media retry (Baileys updateMediaMessage) is for the account's own phone, which kept the message.
  if (type === 'server-error') {
    answerMediaRetry(ctx.network, ctx.account, ctx.device, node).catch((err: unknown) => {
      ctx.network.logger.warn({ err, messageId: id }, 'phone could not answer a media retry');
    });
    return;
  }
  if (type && LOCAL_TYPES.has(type)) return;
  if (parseGroupJid(node.attrs.to)) return handleGroupReceipt(ctx, node);
  const origin = ctx.network.originOf(id);
  const addressed = ctx.network.accounts.resolve(node.attrs.to);
  const senderAccount = origin ? ctx.network.accounts.get(origin.phone) : addressed?.account;
  if (!senderAccount || senderAccount === ctx.account) return;
  const senderDevice = origin?.device ?? addressed?.device ?? 0;
  const kind = !type || type === 'inactive' ? 'delivery' : type;
  if (kind !== 'retry' && !ctx.network.firstReceipt(id, kind)) return;
  const attrs: Record<string, string> = {
    from: ctx.network.jidOf(ctx.account),
    id,
    t: node.attrs.t ?? String(Math.floor(Date.now() / 1000)),
  };
  // An `inactive` receipt (clients without active receipts) is a delivery receipt for the sender.
  if (type && type !== 'inactive') attrs.type = type;
  if (type === 'retry') attrs.participant = ctx.network.jidOf(ctx.account, ctx.device);
  const forwarded: BinaryNode = { tag: 'receipt', attrs, ...(node.content ? { content: node.content } : {}) };
  if (senderDevice === 0) {
    if (type === 'retry' && child(node, 'retry')) {
      ctx.phones.resend(senderAccount, ctx.account, ctx.device, id).catch((err: unknown) => {
        ctx.network.logger.warn({ err, messageId: id }, 'phone could not answer a retry receipt');
      });
    }
    return;
  }
  ctx.network.deliver(senderAccount, senderDevice, forwarded);
}

/** Further message ids of a receipt for several messages (`<list><item id/></list>`). */
function listedIds(node: BinaryNode): string[] {
  const ids: string[] = [];
  for (const item of children(child(node, 'list'))) if (item.tag === 'item' && item.attrs.id) ids.push(item.attrs.id);
  return ids;
}
