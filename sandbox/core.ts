import type { NoiseKeys } from './certs.js';
import { buildCertChain } from './certs.js';
import type { Logger } from './log.js';
import { Network, type Addressing } from './network/network.js';
import { PairingError, PairingRegistry } from './network/pairing.js';
import type { Account } from './network/model.js';
import { Phones } from './phone/phone.js';
import { buildPairSuccess, parseQr, verifyDeviceSignature } from './phone/pairing.js';
import { pnJid } from './network/jids.js';
import { bytes, child } from './handlers/context.js';
import { randomBytes } from 'node:crypto';

const SIGN_TIMEOUT_MS = 15_000;
const KNOWN_ACCOUNTS_LIMIT = 500;

/** The network's moving parts, shared by the chat endpoint and the control API. */
export class SandboxCore {
  readonly network: Network;
  readonly phones: Phones;
  readonly pairing = new PairingRegistry();
  readonly certChain: Uint8Array;

  constructor(noiseKeys: NoiseKeys, logger: Logger, onChange: () => void, addressing: Addressing = 'pn') {
    this.network = new Network(noiseKeys, logger, onChange, addressing);
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

  /**
   * The phone `phone` scans `qr`: it signs the companion's identity (pair-success), waits for
   * the counter-signature, records the device and restarts the companion's stream (515).
   */
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
    const { device, keyIndex } = this.network.accounts.reserveDevice(account);
    const iqId = randomBytes(8).toString('hex');
    pending.send(
      buildPairSuccess({
        account,
        device,
        keyIndex,
        companionIdentity: pending.identityKey,
        advSecret: parsed.advSecret,
        platform: pending.platform,
        iqId,
      }),
    );
    let reply;
    try {
      reply = await pending.awaitReply(iqId, SIGN_TIMEOUT_MS);
    } catch {
      pending.linking = false;
      throw new PairingError('the device did not confirm pairing', 504);
    }
    const signed = bytes(child(child(reply, 'pair-device-sign'), 'device-identity'));
    if (reply.attrs.type !== 'result' || !signed || !verifyDeviceSignature(signed, pending.identityKey, account.phoneIdentity.identity.public)) {
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
      queue: [],
      unreceipted: new Map(),
    });
    this.network.notifyDevicesChanged(account, linked.device);
    pending.kick({ tag: 'stream:error', attrs: { code: '515' } });
    return { jid: pnJid(account.phone, linked.device), device: linked.device };
  }
}
