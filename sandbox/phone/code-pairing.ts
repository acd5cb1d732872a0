import { createCipheriv, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { aesDecryptGCM, Curve, hkdf } from '@whiskeysockets/baileys';
import type { KeyPair } from '../certs.js';

/**
 * The phone's half of linking by code (the companion's half is Baileys' `requestPairingCode`
 * and its `link_code_companion_reg` notification handler). The code never travels: both sides
 * wrap an ephemeral X25519 key under a key derived from it, and a wrong code shows only when
 * the companion's key bundle fails to decrypt. See docs/sandbox-protocol.md.
 */

const pbkdf2Async = promisify(pbkdf2);

/** The code the phone shows is 8 characters; people type it with a dash, spaces or in lower case. */
export function normalizeCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

/** PBKDF2-SHA256, 2^17 rounds, as Baileys' `derivePairingCodeKey`. */
function codeKey(code: string, salt: Buffer): Promise<Buffer> {
  return pbkdf2Async(Buffer.from(code, 'utf8'), salt, 2 << 16, 32, 'sha256');
}

/** AES-256-CTR is its own inverse: the same call wraps and unwraps. */
function ctr(data: Buffer, key: Buffer, iv: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-ctr', key, iv);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

/** salt(32) ‖ iv(16) ‖ AES-CTR(key 32): the shape both wrapped ephemeral keys have. */
export const WRAPPED_KEY_LENGTH = 80;

/** The companion's ephemeral public key as the code entered on the phone unwraps it. */
export async function unwrapEphemeral(wrapped: Buffer, code: string): Promise<Buffer> {
  if (wrapped.length < WRAPPED_KEY_LENGTH) throw new Error('wrapped key too short');
  const salt = wrapped.subarray(0, 32);
  const iv = wrapped.subarray(32, 48);
  return ctr(wrapped.subarray(48, 80), await codeKey(code, salt), iv);
}

export async function wrapEphemeral(publicKey: Buffer, code: string): Promise<Buffer> {
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  return Buffer.concat([salt, iv, ctr(publicKey, await codeKey(code, salt), iv)]);
}

/** What the companion's `companion_finish` proves once its key bundle decrypts. */
export interface OpenedKeyBundle {
  companionIdentity: Buffer;
  advSecret: Buffer;
}

/**
 * Decrypts the companion's key bundle (salt ‖ iv(12) ‖ AES-GCM of companion identity ‖ primary
 * identity ‖ random) with the secret shared through the two ephemeral keys, and derives the
 * advSecret the pair-success HMAC is keyed with. Undefined when it does not decrypt or names
 * other identities: the code the phone entered was not the companion's.
 */
export function openKeyBundle(params: {
  bundle: Buffer;
  phoneEphemeral: KeyPair;
  companionEphemeral: Buffer;
  primaryIdentity: KeyPair;
  companionIdentity: Buffer;
}): OpenedKeyBundle | undefined {
  const { bundle, phoneEphemeral, companionEphemeral, primaryIdentity, companionIdentity } = params;
  if (bundle.length < 32 + 12 + 16) return undefined;
  const ephemeralShared = Curve.sharedKey(phoneEphemeral.private, companionEphemeral);
  const key = Buffer.from(hkdf(ephemeralShared, 32, { salt: bundle.subarray(0, 32), info: 'link_code_pairing_key_bundle_encryption_key' }));
  let plain: Buffer;
  try {
    plain = aesDecryptGCM(bundle.subarray(44), key, bundle.subarray(32, 44), Buffer.alloc(0));
  } catch {
    return undefined;
  }
  if (plain.length !== 96) return undefined;
  if (!plain.subarray(0, 32).equals(companionIdentity) || !plain.subarray(32, 64).equals(primaryIdentity.public)) {
    return undefined;
  }
  const identityShared = Curve.sharedKey(primaryIdentity.private, companionIdentity);
  const advSecret = Buffer.from(hkdf(Buffer.concat([ephemeralShared, identityShared, plain.subarray(64, 96)]), 32, { info: 'adv_secret' }));
  return { companionIdentity, advSecret };
}
