import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuthenticationCreds, SignalAuthState, SignalRepositoryWithLIDStore } from '@whiskeysockets/baileys';

/**
 * One Signal key transaction at a time per account, sends included.
 *
 * Baileys (7.0.0-rc14, Utils/auth-utils.js `addTransactionCapability`) locks a key transaction by
 * the label its caller passes, and only against others of the same label: a send
 * (Socket/messages-send.js `relayMessage`) and a retry receipt take the account's own jid, a
 * decryption (Signal/libsignal.js `decryptMessage`) the sender's jid, a session built from a
 * retry receipt's keys the asking device's jid. Each transaction reads a session record into a
 * cache of its own and writes the whole record back when it commits, and a send commits only
 * after its stanza left. A message from a contact decrypted while a send to that contact is
 * under way therefore writes back the record as it was before the send (or the send writes back
 * the record as it was before the decryption): a step of the ratchet is lost. The next message
 * to the contact reuses a message key the contact has used up (`Key used already`, `No matching
 * sessions`), and the retries, which race alike, can leave the two sides apart for good (`Bad
 * MAC`). It showed when an account moved to another connector: the new owner runs the sends
 * queued meanwhile and receives the messages held for the account in the same second, and a
 * decryption stays open while its record is stored (durable-decrypt.ts).
 *
 * So every transaction the signal repository opens takes the label of the sends, the account's
 * own jid: an account's sends and decryptions take turns (its decryptions took turns already,
 * under Baileys' message mutex). Session deletions keep their label: Baileys deletes a removed
 * device's sessions while it holds its device-list mutex, which a send waits for inside its
 * transaction, and under one label each would wait for the other for good. A deletion that
 * races a send at worst leaves the session of a device no longer sent to.
 */

/** Set while the repository deletes sessions: its transaction keeps Baileys' label. */
const ownLabelKept = new AsyncLocalStorage<true>();

/** The auth state for the signal repository: its key transactions under the account's own jid. */
export function underOwnJid(auth: SignalAuthState): SignalAuthState {
  const keys = auth.keys;
  if (!('transaction' in keys)) return auth;
  // Baileys' creds object, on which `me` appears once the device is linked (no send before).
  const creds: Partial<AuthenticationCreds> = auth.creds;
  return {
    ...auth,
    keys: {
      ...keys,
      transaction: (work, label) => keys.transaction(work, ownLabelKept.getStore() ? label : (creds.me?.id ?? label)),
    },
  };
}

/** The repository, its session deletions under Baileys' own label (see above). */
export function withDeletionsApart(repository: SignalRepositoryWithLIDStore): SignalRepositoryWithLIDStore {
  return { ...repository, deleteSession: (jids) => ownLabelKept.run(true, () => repository.deleteSession(jids)) };
}
