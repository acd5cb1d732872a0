import type { BinaryNode } from '@whiskeysockets/baileys';
import { iqResult, type StanzaContext } from './context.js';
import { handleEncrypt } from './encrypt.js';
import { handleUsync } from './usync.js';
import { handleSessionIq } from './session.js';
import { handleMd } from './md.js';
import { handleMessage } from './message.js';
import { handleReceipt } from './receipt.js';
import { handleChatstate, handlePresence } from './presence.js';
import { handleGroupIq } from '../groups/iq.js';

/** Routes one stanza of a logged-in device to its handler. Unknown iqs get an empty result so no client query stalls. */
export function dispatchStanza(ctx: StanzaContext, node: BinaryNode): void {
  switch (node.tag) {
    case 'iq':
      return handleIq(ctx, node);
    case 'message':
      return handleMessage(ctx, node);
    case 'receipt':
      return handleReceipt(ctx, node);
    case 'chatstate':
      return handleChatstate(ctx, node);
    case 'presence':
      return handlePresence(ctx, node);
    case 'call':
      return ctx.network.calls.fromDevice(ctx.account, ctx.device, node, ctx.send);
    case 'ack':
      if (node.attrs.error) {
        ctx.network.logger.debug({ attrs: node.attrs }, 'client refused a stanza');
      }
      if (node.attrs.class === 'message' && node.attrs.id) ctx.network.acknowledged(ctx.companion, node.attrs.id);
      return;
    default:
      return;
  }
}

function handleIq(ctx: StanzaContext, iq: BinaryNode): void {
  switch (iq.attrs.xmlns) {
    case 'encrypt':
      return handleEncrypt(ctx, iq);
    case 'usync':
      return handleUsync(ctx, iq);
    case 'md':
      return handleMd(ctx, iq);
    case 'w:g2':
      return handleGroupIq(ctx, iq);
    default:
      if (!handleSessionIq(ctx, iq)) ctx.send(iqResult(iq));
  }
}
