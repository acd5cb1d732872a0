import { generateSignalPubKey } from '@whiskeysockets/baileys';
import { SessionRecord, type SignalStorage } from 'libsignal';
import type { PhoneIdentity } from '../network/model.js';

/** libsignal storage for a simulated phone (device 0): sessions live in the account record. */
export function phoneSignalStore(identity: PhoneIdentity, onChange: () => void): SignalStorage {
  const ourIdentity = {
    privKey: identity.identity.private,
    pubKey: Buffer.from(generateSignalPubKey(identity.identity.public)),
  };
  const signedPreKey = {
    privKey: identity.signedPreKey.keyPair.private,
    pubKey: Buffer.from(generateSignalPubKey(identity.signedPreKey.keyPair.public)),
  };
  return {
    async loadSession(id) {
      const stored = identity.sessions.get(id);
      // libsignal's typings call the serialized form bytes; it is the JSON object serialize() returned.
      return stored ? SessionRecord.deserialize(stored as Uint8Array) : undefined;
    },
    async storeSession(id, session) {
      identity.sessions.set(id, session.serialize());
      onChange();
    },
    isTrustedIdentity: () => true,
    // The phone publishes no one-time pre-keys: its bundle is the signed pre-key alone.
    loadPreKey: async () => undefined,
    removePreKey: () => {},
    loadSignedPreKey: () => signedPreKey,
    getOurRegistrationId: () => identity.registrationId,
    getOurIdentity: () => ourIdentity,
  };
}
