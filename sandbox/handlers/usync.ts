import type { BinaryNode } from '@whiskeysockets/baileys';
import { child, children, iqResult, type StanzaContext } from './context.js';
import type { Account } from '../network/model.js';
import { lidJid, pnJid } from '../network/jids.js';

/**
 * xmlns="usync": answers the devices, lid and contact protocols per user (socket.js:172-221).
 * Every user that exists gets its device list (device 0 plus companions with key-index) and LID.
 */
export function handleUsync(ctx: StanzaContext, iq: BinaryNode): void {
  const usync = child(iq, 'usync');
  const query = child(usync, 'query');
  const wanted = new Set(children(query).map((p) => p.tag));
  const users: BinaryNode[] = [];
  for (const user of children(child(usync, 'list'))) {
    const contact = child(user, 'contact');
    const phoneText = contact?.content ? Buffer.from(contact.content as Uint8Array).toString() : undefined;
    const lookupJid = user.attrs.jid ?? (phoneText ? `${phoneText.replace(/[^0-9]/g, '')}@s.whatsapp.net` : undefined);
    const resolved = ctx.network.accounts.resolve(lookupJid);
    const echoJid = user.attrs.jid ?? (resolved ? pnJid(resolved.account.phone) : lookupJid);
    if (!echoJid) continue;
    const content: BinaryNode[] = [];
    if (wanted.has('contact')) content.push({ tag: 'contact', attrs: { type: resolved ? 'in' : 'out' } });
    if (resolved) {
      if (wanted.has('devices')) content.push(deviceList(resolved.account));
      if (wanted.has('lid')) content.push({ tag: 'lid', attrs: { val: lidJid(resolved.account.lid) } });
      if (wanted.has('status')) content.push({ tag: 'status', attrs: { t: '0' } });
    }
    users.push({ tag: 'user', attrs: { jid: echoJid }, content });
  }
  ctx.send(
    iqResult(iq, [
      {
        tag: 'usync',
        attrs: { ...(usync?.attrs ?? {}) },
        content: [
          { tag: 'result', attrs: {} },
          { tag: 'list', attrs: {}, content: users },
        ],
      },
    ]),
  );
}

function deviceList(account: Account): BinaryNode {
  const devices: BinaryNode[] = [{ tag: 'device', attrs: { id: '0' } }];
  for (const companion of account.devices.values()) {
    devices.push({ tag: 'device', attrs: { id: String(companion.device), 'key-index': String(companion.keyIndex) } });
  }
  return { tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: devices }] };
}
