import { AsyncLocalStorage } from 'node:async_hooks';
import type { SignalDataSet, SignalKeyStore, SignalKeyStoreWithTransaction } from '@whiskeysockets/baileys';

/**
 * A message tried against the sessions of a contact changes only the session that decrypts it.
 *
 * libsignal (the `libsignal` package under Baileys 7.0.0-rc14, src/session_cipher.js
 * `decryptWithSessions`) tries a `msg` against each session of the record in turn, on the live
 * session objects: a session it fails on keeps the ratchet step and the used-up message keys of
 * that attempt, and the record is stored so once a later session decrypts the message. And a
 * session that decrypts while closed stays closed: the next send still goes out on the open one.
 * Two devices that write to each other for the first time at the same moment (each sends its
 * first message before the other's arrives) both end up with both sessions, each keeping the
 * other's open. Every message then first fails on the receiver's open session and damages it,
 * so the next message sent on that session cannot be decrypted (`Bad MAC`, `No matching
 * sessions`); the sessions that retry receipts bring are damaged alike by the next message in
 * the other direction, and a message is lost once its retries run out. Signal's reference
 * implementation tries each session on a copy and makes the one that decrypted the open one.
 *
 * So, within the decryption of a `msg`, the record as read is kept; when libsignal stores it,
 * every session but the one that decrypted (the one whose `used` time it set) is put back as it
 * was, and that one becomes the open session (the one that was open is closed): both devices
 * then send on the session the other last used, and the two agree on one. A record that does
 * not match that shape (sessions added or removed, no single session used) is stored as it is.
 */

/** A libsignal `SessionRecord` as serialized (`serialize()`), the fields read here. */
interface StoredRecord {
  _sessions: Record<string, StoredSession>;
}
interface StoredSession {
  indexInfo: { closed: number; used?: number };
}

/** The session records read in one `msg` decryption, as read, by key id. */
const recordsRead = new AsyncLocalStorage<Map<string, StoredRecord>>();

/** Runs one decryption of a `msg` (not a `pkmsg`: libsignal tries no other session on those). */
export function asTrialDecryption<T>(decrypt: () => Promise<T>): Promise<T> {
  return recordsRead.run(new Map(), decrypt);
}

/** The key store for the signal repository: session records written by a trial decryption are repaired first. */
export function withTrialRepair<K extends SignalKeyStore | SignalKeyStoreWithTransaction>(keys: K): K {
  return {
    ...keys,
    async get(type, ids) {
      const found = await keys.get(type, ids);
      const read = recordsRead.getStore();
      if (read && type === 'session') {
        // The stored object itself: libsignal deserializes it into objects of its own, and a
        // write always brings a new object, so it stays as read.
        for (const id of ids) if (!read.has(id) && found[id]) read.set(id, found[id] as unknown as StoredRecord);
      }
      return found;
    },
    set(data: SignalDataSet) {
      const read = recordsRead.getStore();
      if (!read || !data.session) return keys.set(data);
      const session: NonNullable<SignalDataSet['session']> = {};
      for (const [id, value] of Object.entries(data.session)) {
        const before = read.get(id);
        session[id] = value && before ? (repaired(before, value as unknown as StoredRecord) as unknown as Uint8Array) : value;
      }
      return keys.set({ ...data, session });
    },
  };
}

/** `after` with the sessions its decryption failed on as they were `before`, and the one that decrypted open. */
function repaired(before: StoredRecord, after: StoredRecord): StoredRecord {
  const ids = Object.keys(after._sessions);
  if (ids.length !== Object.keys(before._sessions).length || !ids.every((id) => id in before._sessions)) return after;
  const used = ids.filter((id) => after._sessions[id]?.indexInfo.used !== before._sessions[id]?.indexInfo.used);
  if (used.length !== 1) return after;
  const [winner] = used as [string];
  const sessions: Record<string, StoredSession> = {};
  for (const id of ids) {
    const session = (id === winner ? after : before)._sessions[id]!;
    const open = id === winner;
    const closed = open ? -1 : session.indexInfo.closed === -1 ? Date.now() : session.indexInfo.closed;
    sessions[id] = closed === session.indexInfo.closed ? session : { ...session, indexInfo: { ...session.indexInfo, closed } };
  }
  return { ...after, _sessions: sessions };
}
