import { Curve, generateSignalPubKey, type SignalRepositoryWithLIDStore } from '@whiskeysockets/baileys';
import type { MemoryAuthState } from './memory-auth.js';

/**
 * Gives `repository` a Signal session to `jid` built from a fresh pre-key bundle of the device
 * whose auth state is `to`, as a first send does (the pre-key is stored in `to`, so `to` can
 * decrypt the pre-key message that follows).
 */
export async function injectSessionFromBundle(repository: SignalRepositoryWithLIDStore, to: MemoryAuthState, jid: string): Promise<void> {
  const preKey = Curve.generateKeyPair();
  await to.keys.set({ 'pre-key': { '1': preKey } });
  const { creds } = to;
  await repository.injectE2ESession({
    jid,
    session: {
      registrationId: creds.registrationId,
      identityKey: generateSignalPubKey(creds.signedIdentityKey.public),
      signedPreKey: {
        keyId: creds.signedPreKey.keyId,
        publicKey: generateSignalPubKey(creds.signedPreKey.keyPair.public),
        signature: creds.signedPreKey.signature,
      },
      preKey: { keyId: 1, publicKey: generateSignalPubKey(preKey.public) },
    },
  });
}
