import type { NoiseKeys } from './certs.js';
import { buildCertChain } from './certs.js';
import type { Logger } from './log.js';
import { Network, type Addressing } from './network/network.js';
import { PairingError, PairingRegistry, type PendingCompanion } from './network/pairing.js';
import type { Account } from './network/model.js';
import { Phones } from './phone/phone.js';
import { buildPairSuccess, parseQr, verifyDeviceSignature } from './phone/pairing.js';
import { pnJid } from './network/jids.js';
import { bytes, child, iqError, iqResult, SERVER_JID } from './handlers/context.js';
import { normalizeCode, openKeyBundle, unwrapEphemeral, wrapEphemeral } from './phone/code-pairing.js';
import { randomBytes } from 'node:crypto';
import { Curve, type BinaryNode } from '@whiskeysockets/baileys';
import { ClientVersions } from './client-version.js';
import type { WaVersion } from '../core/wa-version.js';

const SIGN_TIMEOUT_MS = 15_000;
const KNOWN_ACCOUNTS_LIMIT = 500;

/** The network's moving parts, shared by the chat endpoint and the control API. */
export class SandboxCore {
  readonly network: Network;
  readonly phones: Phones;
  readonly pairing = new PairingRegistry();
  readonly certChain: Uint8Array;
  readonly clientVersions: ClientVersions;

  constructor(noiseKeys: NoiseKeys, logger: Logger, onChange: () => void, addressing: Addressing = 'pn', minimumClientVersion?: WaVersion) {
    this.network = new Network(noiseKeys, logger, onChange, addressing);
    this.clientVersions = new ClientVersions(minimumClientVersion);
    this.phones = new Phones(this.network);
    this.certChain = buildCertChain(noiseKeys);
  }

  /** Accounts whose PN<->LID mapping a phone shares in its history bootstrap. */
  knownAccounts(exclude: Account): Account[] {
    const out: Account[] = [];
    for (const account of this.network.accounts.all()) {
      if (account !== exclude) out.push(account);
      if (out.length >= KNOWN_ACCOUNTS_LIMIT) break;
    }
    return out;
  }

  /** The phone `phone` scans `qr`, which carries the advSecret; the link completes as below. */
  async scan(phone: string, qr: string): Promise<{ jid: string; device: number }> {
    const account = this.network.accounts.get(phone);
    if (!account) throw new PairingError('unknown phone', 404);
    const parsed = parseQr(qr);
    if (!parsed) throw new PairingError('malformed QR', 400);
    const pending = this.pairing.find(parsed.ref);
    if (!pending) throw new PairingError('QR expired or unknown', 404);
    if (!pending.noiseKey.equals(parsed.noiseKey) || !pending.identityKey.equals(parsed.identityKey)) {
      throw new PairingError('QR does not match the waiting device', 400);
    }
    if (pending.linking) throw new PairingError('QR already scanned', 409);
    pending.linking = true;
    return this.completeLink(account, pending, parsed.advSecret);
  }

  /**
   * The phone `phone` enters `code` (WhatsApp > Linked devices > Link with phone number). Every
   * companion that asked this number for a code is tried, newest first: the phone sends it its
   * own ephemeral key wrapped under the code (`primary_hello`), the companion answers with its
   * key bundle (`companion_finish`), and only the companion whose code it was can build one the
   * phone decrypts. That one is linked as after a scan, with the advSecret the exchange derived;
   * the others are told no and keep waiting for another try until their request expires.
   */
  async pairByCode(phone: string, code: string): Promise<{ jid: string; device: number }> {
    const account = this.network.accounts.get(phone);
    if (!account) throw new PairingError('unknown phone', 404);
    const waiting = this.pairing.waitingForCode(phone).filter((c) => !c.linking);
    if (!waiting.length) throw new PairingError('no device is waiting for a code from this number', 404);
    for (const pending of waiting) {
      const advSecret = await this.exchangeCodeKeys(account, pending, normalizeCode(code));
      if (advSecret) return this.completeLink(account, pending, advSecret);
    }
    throw new PairingError('wrong code', 400);
  }

  /** One companion's code exchange; its advSecret, or undefined when the code was not its own. */
  private async exchangeCodeKeys(account: Account, pending: PendingCompanion, code: string): Promise<Buffer | undefined> {
    const link = pending.codeLink;
    if (!link || pending.linking) return undefined;
    pending.linking = true;
    let linking = false;
    try {
      const companionEphemeral = await unwrapEphemeral(link.wrappedEphemeral, code);
      const generated = Curve.generateKeyPair();
      const phoneEphemeral = { public: Buffer.from(generated.public), private: Buffer.from(generated.private) };
      const finish = this.awaitCodeFinish(pending);
      pending.send(primaryHello(account, link.ref, await wrapEphemeral(phoneEphemeral.public, code)));
      const iq = await finish;
      const reg = child(iq, 'link_code_companion_reg');
      const bundle = bytes(child(reg, 'link_code_pairing_wrapped_key_bundle'));
      const companionIdentity = bytes(child(reg, 'companion_identity_public'));
      const sameRef = bytes(child(reg, 'link_code_pairing_ref'))?.toString() === link.ref;
      const opened =
        bundle && sameRef && companionIdentity?.equals(pending.identityKey)
          ? openKeyBundle({
              bundle,
              phoneEphemeral,
              companionEphemeral,
              primaryIdentity: account.phoneIdentity.identity,
              companionIdentity,
            })
          : undefined;
      if (!opened) {
        pending.send(iqError(iq, 401, 'not-authorized'));
        return undefined;
      }
      pending.send(iqResult(iq));
      linking = true;
      return opened.advSecret;
    } finally {
      if (!linking) pending.linking = false;
    }
  }

  private awaitCodeFinish(pending: PendingCompanion): Promise<BinaryNode> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.onCodeFinish = undefined;
        reject(new PairingError('the device did not answer', 504));
      }, SIGN_TIMEOUT_MS);
      pending.onCodeFinish = (iq) => {
        clearTimeout(timer);
        pending.onCodeFinish = undefined;
        resolve(iq);
      };
    });
  }

  /**
   * The end of every link (scan or code; `pending.linking` already set): the phone signs the
   * companion's identity (pair-success, HMAC keyed by `advSecret`), waits for the
   * counter-signature, records the device and restarts the companion's stream (515).
   */
  private async completeLink(account: Account, pending: PendingCompanion, advSecret: Buffer): Promise<{ jid: string; device: number }> {
    const { device, keyIndex } = this.network.accounts.reserveDevice(account);
    const iqId = randomBytes(8).toString('hex');
    pending.send(
      buildPairSuccess({
        account,
        device,
        keyIndex,
        companionIdentity: pending.identityKey,
        advSecret,
        platform: pending.platform,
        iqId,
      }),
    );
    let reply: BinaryNode;
    try {
      reply = await pending.awaitReply(iqId, SIGN_TIMEOUT_MS);
    } catch {
      pending.linking = false;
      throw new PairingError('the device did not confirm pairing', 504);
    }
    const signed = bytes(child(child(reply, 'pair-device-sign'), 'device-identity'));
    if (
      reply.attrs.type !== 'result' ||
      !signed ||
      !verifyDeviceSignature(signed, pending.identityKey, account.phoneIdentity.identity.public)
    ) {
      pending.kick();
      throw new PairingError('the device refused pairing', 400);
    }
    this.pairing.forget(pending);
    const linked = this.network.accounts.linkDevice(account, {
      device,
      keyIndex,
      noiseKey: pending.noiseKey,
      identityKey: pending.identityKey,
      registrationId: pending.registrationId,
      signedPreKey: pending.signedPreKey,
      preKeys: new Map(),
      platform: pending.platform,
      linkedAt: Date.now(),
      bootstrapped: false,
      fullSync: pending.fullSync,
      queue: [],
      unreceipted: new Map(),
    });
    this.network.notifyDevicesChanged(account, linked.device);
    pending.kick({ tag: 'stream:error', attrs: { code: '515' } });
    return { jid: pnJid(account.phone, linked.device), device: linked.device };
  }
}

/** The notification that carries the phone's answer to a code (Baileys: messages-recv.js). */
function primaryHello(account: Account, ref: string, wrappedEphemeral: Buffer): BinaryNode {
  return {
    tag: 'notification',
    attrs: {
      from: SERVER_JID,
      type: 'link_code_companion_reg',
      id: randomBytes(8).toString('hex'),
      t: String(Math.floor(Date.now() / 1000)),
    },
    content: [
      {
        tag: 'link_code_companion_reg',
        attrs: { stage: 'primary_hello' },
        content: [
          { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) },
          { tag: 'primary_identity_pub', attrs: {}, content: account.phoneIdentity.identity.public },
          { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrappedEphemeral },
        ],
      },
    ],
  };
}
