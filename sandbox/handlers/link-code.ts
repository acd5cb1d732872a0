import { randomBytes } from 'node:crypto';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { PairingRegistry, PendingCompanion } from '../network/pairing.js';
import { WRAPPED_KEY_LENGTH } from '../phone/code-pairing.js';
import { bytes, child, iqError, iqResult } from './context.js';

/** How long a companion's request to be linked by code stays open (WhatsApp's codes last minutes). */
const CODE_LINK_TTL_MS = 180_000;

/**
 * `link_code_companion_reg` iqs of a registering (not yet linked) connection (Baileys'
 * `requestPairingCode`, socket.js, and its notification handler, messages-recv.js).
 * `companion_hello` opens a link by code for the number it names; `companion_finish` goes to
 * the phone that is linking it (core.ts). Anything else is refused with an iq error.
 */
export function handleLinkCodeIq(registry: PairingRegistry, pending: PendingCompanion, iq: BinaryNode): void {
  const reg = child(iq, 'link_code_companion_reg');
  switch (reg?.attrs.stage) {
    case 'companion_hello': {
      const phone = /^(\d{5,20})@s\.whatsapp\.net$/.exec(reg.attrs.jid ?? '')?.[1];
      const wrappedEphemeral = bytes(child(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub'));
      const noiseKey = bytes(child(reg, 'companion_server_auth_key_pub'));
      if (!phone || wrappedEphemeral?.length !== WRAPPED_KEY_LENGTH || !noiseKey?.equals(pending.noiseKey)) {
        pending.send(iqError(iq, 400, 'bad-request'));
        return;
      }
      const ref = randomBytes(16).toString('base64url');
      registry.awaitCode(pending, { phone, ref, wrappedEphemeral, expiresAt: Date.now() + CODE_LINK_TTL_MS });
      pending.send(
        iqResult(iq, [
          { tag: 'link_code_companion_reg', attrs: {}, content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }] },
        ]),
      );
      return;
    }
    case 'companion_finish':
      if (pending.onCodeFinish) pending.onCodeFinish(iq);
      else pending.send(iqError(iq, 404, 'item-not-found'));
      return;
    default:
      pending.send(iqError(iq, 400, 'bad-request'));
  }
}
