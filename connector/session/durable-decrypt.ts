import { AsyncLocalStorage } from 'node:async_hooks';
import {
  DEFAULT_CONNECTION_CONFIG,
  type BinaryNode,
  type SignalAuthState,
  type SignalKeyStore,
  type SignalKeyStoreWithTransaction,
  type SocketConfig,
} from '@whiskeysockets/baileys';
import type { DecryptedPart } from '../inbound/inbox.js';
import { underOwnJid, withDeletionsApart } from './signal-transactions.js';
import { asTrialDecryption, withTrialRepair } from './trial-decryption.js';

/**
 * Makes every message Baileys decrypts durable before Baileys can send its delivery receipt.
 *
 * Baileys (7.0.0-rc14, Socket/messages-recv.js `handleMessage`) decrypts a stanza, sends the
 * receipt, and only then emits `messages.upsert`; once receipted, WhatsApp never delivers the
 * message again. The only hook inside that sequence is the signal repository it is given
 * (`makeSignalRepository`): this wrapper hands each plaintext to `recordPart` and returns it
 * only once that write resolved. Baileys stays unmodified.
 *
 * The repository sees only the ciphertext; the stanza it came from (id, from, participant, t,
 * notify, offline) is found by the ciphertext's identity: a `CB:message` listener, placed first
 * on the socket's emitter, indexes the `enc` children of every message stanza before Baileys'
 * own listener gets to decrypting them (it does so only after awaiting its message mutex).
 *
 * Order: the plaintext is known inside Baileys' key transaction, before it commits the
 * ratchet's keys (dynamo-auth-state.ts). The transaction body returns only once the record is
 * stored, so the keys are committed after it. The other order loses the message to a crash
 * between the two writes: WhatsApp delivers it again (no receipt left), but the stored
 * session already used up its message key, and only a retry receipt to the sender could
 * bring it back. Both writes are group-committed across accounts.
 */
export interface DurableDecryption {
  makeSignalRepository: SocketConfig['makeSignalRepository'];
  /** Indexes the stanzas arriving on the socket's `ws`; call right after makeWASocket. */
  watch(ws: StanzaEmitter): void;
}

/** The part of Baileys' socket client (`sock.ws`) that emits decoded frames. */
interface StanzaEmitter {
  prependListener(event: 'CB:message', listener: (node: BinaryNode) => void): unknown;
}

interface PartOrigin {
  stanza: BinaryNode['attrs'];
  part: number;
  encType: string;
}

interface PendingRecord {
  origin: PartOrigin;
  /** The first key transaction inside the decryption was entered (nested ones pass through). */
  entered: boolean;
  /** The record was stored inside that transaction, before its keys. */
  recorded: boolean;
}

export function durableDecryption(recordPart: (part: DecryptedPart) => Promise<void>): DurableDecryption {
  const origins = new WeakMap<Uint8Array, PartOrigin>();
  const scope = new AsyncLocalStorage<PendingRecord>();
  const partOf = (origin: PartOrigin, plaintext: Uint8Array): DecryptedPart => ({ ...origin, stanza: { ...origin.stanza }, plaintext });

  /** Runs Baileys' transaction body; in a decryption, stores the record of its plaintext before Baileys commits. */
  async function inDecryption<T>(work: () => Promise<T>): Promise<T> {
    const pending = scope.getStore();
    if (!pending || pending.entered) return work();
    pending.entered = true;
    const result = await work();
    if (result instanceof Uint8Array) {
      // A failed write fails the transaction: Baileys then commits no keys and sends no receipt.
      await recordPart(partOf(pending.origin, result));
      pending.recorded = true;
    }
    return result;
  }

  async function durably(origin: PartOrigin | undefined, decrypt: () => Promise<Uint8Array>): Promise<Uint8Array> {
    if (!origin) return decrypt();
    const pending: PendingRecord = { origin, entered: false, recorded: false };
    const plaintext = await scope.run(pending, decrypt);
    if (!pending.recorded) await recordPart(partOf(origin, plaintext));
    return plaintext;
  }

  function withDecryptionHook(keys: SignalKeyStore | SignalKeyStoreWithTransaction): SignalKeyStore | SignalKeyStoreWithTransaction {
    if (!('transaction' in keys)) return keys;
    return { ...keys, transaction: (work, key) => keys.transaction(() => inDecryption(work), key) };
  }

  return {
    makeSignalRepository(auth: SignalAuthState, logger, pnToLIDFunc) {
      // Its transactions take turns with the account's sends (signal-transactions.ts), and a
      // message tried against several sessions changes only the one it decrypts with (trial-decryption.ts).
      const repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository(
        { ...auth, keys: withDecryptionHook(withTrialRepair(underOwnJid(auth).keys)) },
        logger,
        pnToLIDFunc,
      );
      return withDeletionsApart({
        ...repository,
        decryptMessage: (opts) => {
          const decrypt = () => durably(origins.get(opts.ciphertext), () => repository.decryptMessage(opts));
          return opts.type === 'msg' ? asTrialDecryption(decrypt) : decrypt();
        },
        decryptGroupMessage: (opts) => durably(origins.get(opts.msg), () => repository.decryptGroupMessage(opts)),
      });
    },
    watch(ws) {
      ws.prependListener('CB:message', (node: BinaryNode) => {
        if (!Array.isArray(node.content)) return;
        node.content.forEach((child, part) => {
          if (child.tag === 'enc' && child.content instanceof Uint8Array) {
            origins.set(child.content, { stanza: node.attrs, part, encType: child.attrs.type ?? '' });
          }
        });
      });
    },
  };
}
