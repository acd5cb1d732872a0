import type { BinaryNode } from '@whiskeysockets/baileys';
import { child, iqResult, type StanzaContext } from './context.js';
import { unlinkDevice } from '../network/unlink.js';

/** xmlns="md": a companion logging itself out (remove-companion-device), anything else answered empty. */
export function handleMd(ctx: StanzaContext, iq: BinaryNode): void {
  const remove = child(iq, 'remove-companion-device');
  if (!remove) {
    ctx.send(iqResult(iq));
    return;
  }
  const target = ctx.network.accounts.resolve(remove.attrs.jid);
  ctx.send(iqResult(iq));
  if (target && target.account === ctx.account && target.device !== 0) {
    unlinkDevice(ctx.network, ctx.account, target.device);
  }
  if (!target || target.device === ctx.device) ctx.close();
}
