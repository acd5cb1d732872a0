import { createCipheriv, createDecipheriv, createHash, hkdfSync } from 'node:crypto';
import { Curve, NOISE_MODE, NOISE_WA_HEADER, proto } from '@whiskeysockets/baileys';
import { newKeyPair, type KeyPair } from '../certs.js';

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

const hkdf64 = (ikm: Uint8Array, salt: Uint8Array): [Buffer, Buffer] => {
  const out = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.alloc(0), 64));
  return [out.subarray(0, 32), out.subarray(32)];
};

const iv = (counter: number) => {
  const v = Buffer.alloc(12);
  v.writeUInt32BE(counter, 8);
  return v;
};

function gcmEncrypt(key: Uint8Array, counter: number, aad: Uint8Array, plaintext: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv(counter));
  cipher.setAAD(aad);
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function gcmDecrypt(key: Uint8Array, counter: number, aad: Uint8Array, ciphertext: Uint8Array): Buffer {
  if (ciphertext.length < 16) throw new Error('ciphertext too short');
  const decipher = createDecipheriv('aes-256-gcm', key, iv(counter));
  decipher.setAAD(aad);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  return Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
}

/** Transport keys after the handshake: each direction has its own counter and an empty AAD. */
export class TransportCipher {
  private readCounter = 0;
  private writeCounter = 0;
  private static readonly EMPTY = Buffer.alloc(0);
  constructor(
    private readonly receiveKey: Buffer,
    private readonly sendKey: Buffer,
  ) {}
  encrypt(plaintext: Uint8Array): Buffer {
    return gcmEncrypt(this.sendKey, this.writeCounter++, TransportCipher.EMPTY, plaintext);
  }
  decrypt(ciphertext: Uint8Array): Buffer {
    return gcmDecrypt(this.receiveKey, this.readCounter++, TransportCipher.EMPTY, ciphertext);
  }
}

export interface HandshakeResult {
  clientStatic: Buffer;
  payload: proto.ClientPayload;
  transport: TransportCipher;
}

/**
 * Server side of Noise_XX_25519_AESGCM_SHA256 as Baileys speaks it (docs/sandbox-protocol.md §1):
 * `respond` consumes the clientHello and returns the serverHello; `finish` consumes the
 * clientFinish and yields the client's static key, its ClientPayload and the transport cipher.
 */
export class ServerHandshake {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private ephemeral: KeyPair | undefined;

  constructor(
    private readonly serverStatic: KeyPair,
    private readonly certChain: Uint8Array,
  ) {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.length === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
    this.mixHash(NOISE_WA_HEADER);
  }

  private mixHash(data: Uint8Array) {
    this.hash = sha256(this.hash, data);
  }

  private mixKey(ikm: Uint8Array) {
    const [salt, key] = hkdf64(ikm, this.salt);
    this.salt = salt;
    this.key = key;
    this.counter = 0;
  }

  private encrypt(plaintext: Uint8Array): Buffer {
    const out = gcmEncrypt(this.key, this.counter++, this.hash, plaintext);
    this.mixHash(out);
    return out;
  }

  private decrypt(ciphertext: Uint8Array): Buffer {
    const out = gcmDecrypt(this.key, this.counter++, this.hash, ciphertext);
    this.mixHash(ciphertext);
    return out;
  }

  respond(clientHelloFrame: Uint8Array): Uint8Array {
    const hello = proto.HandshakeMessage.decode(clientHelloFrame).clientHello;
    const clientEphemeral = hello?.ephemeral;
    if (clientEphemeral?.length !== 32) throw new Error('missing client ephemeral');
    this.mixHash(clientEphemeral);
    const ephemeral = newKeyPair();
    this.ephemeral = ephemeral;
    this.mixHash(ephemeral.public);
    this.mixKey(Curve.sharedKey(ephemeral.private, clientEphemeral));
    const encryptedStatic = this.encrypt(this.serverStatic.public);
    this.mixKey(Curve.sharedKey(this.serverStatic.private, clientEphemeral));
    const encryptedPayload = this.encrypt(this.certChain);
    return proto.HandshakeMessage.encode({
      serverHello: { ephemeral: ephemeral.public, static: encryptedStatic, payload: encryptedPayload },
    }).finish();
  }

  finish(clientFinishFrame: Uint8Array): HandshakeResult {
    if (!this.ephemeral) throw new Error('clientFinish before clientHello');
    const finish = proto.HandshakeMessage.decode(clientFinishFrame).clientFinish;
    if (!finish?.static || !finish.payload) throw new Error('incomplete clientFinish');
    const clientStatic = this.decrypt(finish.static);
    if (clientStatic.length !== 32) throw new Error('bad client static key');
    this.mixKey(Curve.sharedKey(this.ephemeral.private, clientStatic));
    const payload = proto.ClientPayload.decode(this.decrypt(finish.payload));
    const [clientToServer, serverToClient] = hkdf64(Buffer.alloc(0), this.salt);
    return { clientStatic, payload, transport: new TransportCipher(clientToServer, serverToClient) };
  }
}
