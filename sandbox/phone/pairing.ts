import { createHmac, randomInt } from 'node:crypto';
import { Curve, proto, WA_ADV_ACCOUNT_SIG_PREFIX, WA_ADV_DEVICE_SIG_PREFIX, type BinaryNode } from '@whiskeysockets/baileys';
import type { Account } from '../network/model.js';

export interface ParsedQr {
  ref: string;
  noiseKey: Buffer;
  identityKey: Buffer;
  advSecret: Buffer;
  platform: string;
}

const QR_PREFIX = 'https://wa.me/settings/linked_devices#';

/** Parses Baileys' QR text (Utils/companion-reg-client-utils.js:59-62); undefined when malformed. */
export function parseQr(qr: string): ParsedQr | undefined {
  const body = qr.startsWith(QR_PREFIX) ? qr.slice(QR_PREFIX.length) : qr;
  const parts = body.split(',');
  if (parts.length !== 5) return undefined;
  const [ref, noise, identity, adv, platform] = parts as [string, string, string, string, string];
  const b64 = /^[A-Za-z0-9+/]+={0,2}$/;
  if (!ref || !b64.test(noise) || !b64.test(identity) || !b64.test(adv)) return undefined;
  const noiseKey = Buffer.from(noise, 'base64');
  const identityKey = Buffer.from(identity, 'base64');
  const advSecret = Buffer.from(adv, 'base64');
  if (noiseKey.length !== 32 || identityKey.length !== 32 || advSecret.length !== 32) return undefined;
  return { ref, noiseKey, identityKey, advSecret, platform };
}

/**
 * The phone's half of linking: the ADV identity it signs for the new companion, wrapped in the
 * HMAC keyed by the advSecret that only the QR carried (validate-connection.js:128-200).
 */
export function buildPairSuccess(params: {
  account: Account;
  device: number;
  keyIndex: number;
  companionIdentity: Buffer;
  advSecret: Buffer;
  platform: string;
  iqId: string;
}): BinaryNode {
  const { account, device, keyIndex, companionIdentity, advSecret } = params;
  const details = proto.ADVDeviceIdentity.encode({
    rawId: randomInt(1, 0x7fffffff),
    timestamp: Math.floor(Date.now() / 1000),
    keyIndex,
  }).finish();
  const accountSignature = Curve.sign(
    account.phoneIdentity.identity.private,
    Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, companionIdentity]),
  );
  const signed = proto.ADVSignedDeviceIdentity.encode({
    details,
    accountSignatureKey: account.phoneIdentity.identity.public,
    accountSignature,
  }).finish();
  const hmac = createHmac('sha256', advSecret).update(signed).digest();
  const container = proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac }).finish();
  return {
    tag: 'iq',
    attrs: { from: 's.whatsapp.net', type: 'set', id: params.iqId, t: String(Math.floor(Date.now() / 1000)) },
    content: [
      {
        tag: 'pair-success',
        attrs: {},
        content: [
          { tag: 'device-identity', attrs: {}, content: Buffer.from(container) },
          { tag: 'platform', attrs: { name: params.platform } },
          {
            tag: 'device',
            attrs: { jid: `${account.phone}:${device}@s.whatsapp.net`, lid: `${account.lid}:${device}@lid` },
          },
        ],
      },
    ],
  };
}

/** Checks the companion's counter-signature in its pair-device-sign reply. */
export function verifyDeviceSignature(signedIdentity: Uint8Array, companionIdentity: Buffer, accountKey: Buffer): boolean {
  const decoded = proto.ADVSignedDeviceIdentity.decode(signedIdentity);
  if (!decoded.details || !decoded.deviceSignature) return false;
  return Curve.verify(
    companionIdentity,
    Buffer.concat([WA_ADV_DEVICE_SIG_PREFIX, decoded.details, companionIdentity, accountKey]),
    decoded.deviceSignature,
  );
}
