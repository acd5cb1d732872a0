import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { Curve, proto } from '@whiskeysockets/baileys';

export interface KeyPair {
  public: Buffer;
  private: Buffer;
}

/** Keys behind the Noise certificate chain: root (given to clients) -> intermediate -> server static. */
export interface NoiseKeys {
  root: KeyPair;
  intermediate: KeyPair;
  serverStatic: KeyPair;
}

/** A Curve25519 key pair as Buffers (Baileys types them as plain Uint8Arrays). */
export function newKeyPair(): KeyPair {
  const pair = Curve.generateKeyPair();
  return { public: Buffer.from(pair.public), private: Buffer.from(pair.private) };
}

export function generateNoiseKeys(): NoiseKeys {
  return { root: newKeyPair(), intermediate: newKeyPair(), serverStatic: newKeyPair() };
}

/**
 * The CertChain the server sends inside its hello. Baileys checks that the intermediate is
 * signed by WA_CERT_DETAILS.PUBLIC_KEY with issuerSerial 0 and that the leaf is signed by the
 * intermediate (Utils/noise-handler.js:142-163).
 */
export function buildCertChain(keys: NoiseKeys): Uint8Array {
  const { Details } = proto.CertChain.NoiseCertificate;
  const intermediateDetails = Details.encode({
    serial: 1,
    issuerSerial: 0,
    key: keys.intermediate.public,
    notBefore: 0,
    notAfter: 0,
  }).finish();
  const leafDetails = Details.encode({
    serial: 2,
    issuerSerial: 1,
    key: keys.serverStatic.public,
    notBefore: 0,
    notAfter: 0,
  }).finish();
  return proto.CertChain.encode({
    intermediate: {
      details: intermediateDetails,
      signature: Buffer.from(Curve.sign(keys.root.private, intermediateDetails)),
    },
    leaf: { details: leafDetails, signature: Buffer.from(Curve.sign(keys.intermediate.private, leafDetails)) },
  }).finish();
}

export interface TlsMaterial {
  keyPem: string;
  certPem: string;
}

// A minimal DER writer: just enough to express one self-signed X.509 v3 certificate.
const der = (tag: number, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  const len = body.length;
  let header: Buffer;
  if (len < 0x80) header = Buffer.from([tag, len]);
  else if (len < 0x100) header = Buffer.from([tag, 0x81, len]);
  else if (len < 0x10000) header = Buffer.from([tag, 0x82, len >> 8, len & 0xff]);
  else header = Buffer.from([tag, 0x83, len >> 16, (len >> 8) & 0xff, len & 0xff]);
  return Buffer.concat([header, body]);
};
const seq = (...parts: Buffer[]) => der(0x30, ...parts);
const oid = (dotted: string): Buffer => {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [a * 40 + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
};
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'));
const utcTime = (d: Date) => {
  const p = (n: number) => String(n).padStart(2, '0');
  const s = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return der(0x17, Buffer.from(s, 'ascii'));
};
const explicit = (n: number, inner: Buffer) => der(0xa0 + n, inner);

/**
 * A self-signed ECDSA P-256 certificate for 127.0.0.1 / localhost, valid 10 years. It is its
 * own CA (basicConstraints cA), so clients trust it with `ca: certPem`.
 */
export function generateTlsMaterial(commonName = 'wa-sandbox media'): TlsMaterial {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(der(0x31, seq(oid('2.5.4.3'), utf8(commonName))));
  const now = new Date();
  const notBefore = new Date(now.getTime() - 24 * 3600_000);
  const notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600_000);
  const serial = randomBytes(16);
  // A DER INTEGER is positive with its top bit clear and minimal with its first byte non-zero
  // (a leading zero byte is "illegal padding" to OpenSSL): 0x40 keeps both true on every draw.
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;
  const subjectAltName = seq(oid('2.5.29.17'), der(0x04, seq(der(0x82, Buffer.from('localhost')), der(0x87, Buffer.from([127, 0, 0, 1])))));
  const basicConstraints = seq(oid('2.5.29.19'), der(0x01, Buffer.from([0xff])), der(0x04, seq(der(0x01, Buffer.from([0xff])))));
  const tbs = seq(
    explicit(0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ecdsaWithSha256,
    name,
    seq(utcTime(notBefore), utcTime(notAfter)),
    name,
    spki,
    explicit(3, seq(subjectAltName, basicConstraints)),
  );
  const signature = sign('sha256', tbs, privateKey);
  const cert = seq(tbs, ecdsaWithSha256, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = cert.toString('base64').replace(/.{64}/g, '$&\n');
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certPem: `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`,
  };
}

/** True when the PEM pair parses (a corrupted data directory regenerates instead of crashing). */
export function isUsableTlsMaterial(material: TlsMaterial): boolean {
  try {
    createPrivateKey(material.keyPem);
    createPublicKey(material.certPem);
    return true;
  } catch {
    return false;
  }
}
