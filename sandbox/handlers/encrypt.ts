import { KEY_BUNDLE_TYPE, type BinaryNode } from '@whiskeysockets/baileys';
import { bytes, child, children, encodeUintBE, iqError, iqResult, uintBE, type StanzaContext } from './context.js';
import type { Account } from '../network/model.js';

/** xmlns="encrypt": pre-key count, upload, digest, rotation and bundle fetch (signal.js:100-137). */
export function handleEncrypt(ctx: StanzaContext, iq: BinaryNode): void {
  const first = children(iq)[0];
  if (iq.attrs.type === 'get' && first?.tag === 'count') {
    ctx.send(iqResult(iq, [{ tag: 'count', attrs: { value: String(ctx.companion.preKeys.size) } }]));
    return;
  }
  if (iq.attrs.type === 'get' && first?.tag === 'digest') {
    ctx.send(iqResult(iq, [{ tag: 'digest', attrs: {} }]));
    return;
  }
  if (iq.attrs.type === 'get' && first?.tag === 'key') {
    ctx.send(fetchBundles(ctx, iq, first));
    return;
  }
  if (iq.attrs.type === 'set' && first?.tag === 'rotate') {
    const skey = parseSignedKey(child(first, 'skey'));
    if (!skey) return ctx.send(iqError(iq, 400, 'bad-request'));
    ctx.companion.signedPreKey = skey;
    ctx.network.changed();
    ctx.send(iqResult(iq));
    return;
  }
  if (iq.attrs.type === 'set') {
    const list = child(iq, 'list');
    for (const key of children(list)) {
      const id = uintBE(bytes(child(key, 'id')));
      const value = bytes(child(key, 'value'));
      if (id !== undefined && value?.length === 32) ctx.companion.preKeys.set(id, value);
    }
    const skey = parseSignedKey(child(iq, 'skey'));
    if (skey) ctx.companion.signedPreKey = skey;
    ctx.network.changed();
    ctx.send(iqResult(iq));
    return;
  }
  ctx.send(iqError(iq, 400, 'bad-request'));
}

function parseSignedKey(node: BinaryNode | undefined) {
  const keyId = uintBE(bytes(child(node, 'id')));
  const publicKey = bytes(child(node, 'value'));
  const signature = bytes(child(node, 'signature'));
  if (keyId === undefined || publicKey?.length !== 32 || signature?.length !== 64) return undefined;
  return { keyId, publicKey, signature };
}

function keyNode(id: number, value: Buffer, signature?: Buffer): BinaryNode[] {
  const out: BinaryNode[] = [
    { tag: 'id', attrs: {}, content: encodeUintBE(id, 3) },
    { tag: 'value', attrs: {}, content: value },
  ];
  if (signature) out.push({ tag: 'signature', attrs: {}, content: signature });
  return out;
}

/**
 * One `<user>` per requested device, echoing the requested jid. One-time pre-keys are handed
 * out once. Unknown devices get an `error` child, which fails Baileys' whole batch, as WhatsApp's does.
 */
function fetchBundles(ctx: StanzaContext, iq: BinaryNode, keyRequest: BinaryNode): BinaryNode {
  const users: BinaryNode[] = [];
  for (const user of children(keyRequest)) {
    const jid = user.attrs.jid ?? '';
    const resolved = ctx.network.accounts.resolve(jid);
    const bundle = resolved ? bundleFor(ctx, resolved.account, resolved.device) : undefined;
    if (!bundle) {
      users.push({ tag: 'user', attrs: { jid }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] });
      continue;
    }
    users.push({ tag: 'user', attrs: { jid }, content: bundle });
  }
  return iqResult(iq, [{ tag: 'list', attrs: {}, content: users }]);
}

function bundleFor(ctx: StanzaContext, account: Account, device: number): BinaryNode[] | undefined {
  if (device === 0) {
    const phone = account.phoneIdentity;
    return [
      { tag: 'registration', attrs: {}, content: encodeUintBE(phone.registrationId, 4) },
      { tag: 'type', attrs: {}, content: Buffer.from(KEY_BUNDLE_TYPE) },
      { tag: 'identity', attrs: {}, content: phone.identity.public },
      {
        tag: 'skey',
        attrs: {},
        content: keyNode(phone.signedPreKey.keyId, phone.signedPreKey.keyPair.public, phone.signedPreKey.signature),
      },
    ];
  }
  const companion = account.devices.get(device);
  if (!companion) return undefined;
  const nodes: BinaryNode[] = [
    { tag: 'registration', attrs: {}, content: encodeUintBE(companion.registrationId, 4) },
    { tag: 'type', attrs: {}, content: Buffer.from(KEY_BUNDLE_TYPE) },
    { tag: 'identity', attrs: {}, content: companion.identityKey },
    {
      tag: 'skey',
      attrs: {},
      content: keyNode(companion.signedPreKey.keyId, companion.signedPreKey.publicKey, companion.signedPreKey.signature),
    },
  ];
  const next = companion.preKeys.entries().next();
  if (!next.done) {
    const [id, value] = next.value;
    companion.preKeys.delete(id);
    ctx.network.changed();
    nodes.push({ tag: 'key', attrs: {}, content: keyNode(id, value) });
    if (companion.preKeys.size < PREKEY_LOW) warnPreKeysLow(ctx, account, companion.device, companion.preKeys.size);
  }
  return nodes;
}

/** Below this many one-time pre-keys, the device is told to upload more (as WhatsApp does). */
const PREKEY_LOW = 5;

function warnPreKeysLow(ctx: StanzaContext, account: Account, device: number, count: number): void {
  ctx.network.connectionOf(account.phone, device)?.send({
    tag: 'notification',
    attrs: { from: 's.whatsapp.net', type: 'encrypt', id: `prekey-low-${Date.now()}-${device}`, t: String(Math.floor(Date.now() / 1000)) },
    content: [{ tag: 'count', attrs: { value: String(count) } }],
  });
}
