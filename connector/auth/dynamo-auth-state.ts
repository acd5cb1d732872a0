import {
  BufferJSON,
  initAuthCreds,
  makeCacheableSignalKeyStore,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type CacheStore,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import { createBatcher, type Batcher } from '../../core/batcher.js';
import { BoundedCache } from '../../core/bounded-cache.js';
import type { Logger } from '../../core/logger.js';
import { SerialQueue } from '../../core/serial.js';
import {
  clearAuthState,
  readCreds,
  readSignalKeys,
  writeCreds,
  writeSignalKeysOfCollections,
  type SignalKeyWrite,
} from '../../core/store/auth-state.js';
import { perTable, type Table } from '../../core/store/table.js';
import { boundedCacheStore } from './cache-store.js';

/**
 * Baileys' authentication state kept in DynamoDB under one `collectionName`: the creds item and
 * one item per signal key, values serialized with Baileys' BufferJSON. Key writes are awaited
 * before Baileys continues (it awaits `keys.set`), so a pre-key or session it uses is durable
 * first. The key writes of all the accounts on one table go through one group commit
 * (signalKeyWritersFor): the writes that arrive while batch writes are out wait for one of them
 * and then go together, and a collection is in one batch write at a time, so a later write of a
 * key never lands before an earlier one; each `keys.set` still resolves only once its own writes
 * are stored. Keys found absent are remembered (keyStoreFor), so a key Baileys asks for on every message but that
 * does not exist costs no read each time. Creds writes are queued in order and `flush()` waits
 * for them before a reconnect or a shutdown. An in-memory cache in front of the key store
 * spares repeated reads. Both caches are bounded per account (signalKeyCache, KNOWN_ABSENT_LIMIT):
 * an account that talks to many contacts re-reads the keys it has not used lately instead of
 * holding every one of them.
 */
export interface DynamoAuthState {
  state: AuthenticationState;
  /** True when the creds belong to a linked device (a QR was scanned at some point). */
  isLinked(): boolean;
  /** Persists the current creds; writes happen one after another in call order. */
  saveCreds(): Promise<void>;
  /** Resolves when every creds write queued so far is stored. */
  flush(): Promise<void>;
  /**
   * Ends this process's writing to the collection (a stop, a hand-over, a lost lease): the creds
   * as they stand are written once more (unless `saveCreds: false`), then no write is accepted
   * (a key write Baileys still makes throws, a creds write is skipped), and it resolves once
   * the writes already started are stored. The account's lease goes only after it: the next
   * owner then reads everything written here, and nothing written here lands after its own.
   */
  close(options?: { saveCreds?: boolean }): Promise<void>;
  /** Deletes creds and every key (logout), closed first: the next socket starts with a fresh QR. */
  clear(): Promise<void>;
}

/** A key write refused because this process no longer writes the collection (see `close`). */
export class AuthStateClosedError extends Error {
  constructor(collectionName: string) {
    super(`auth state ${collectionName} is closed: the account runs elsewhere now`);
    this.name = 'AuthStateClosedError';
  }
}

/** Whether writes are still accepted, and the key writes started and not yet stored. */
interface WriteGate {
  open: boolean;
  inFlight: Set<Promise<void>>;
}

const serialize = (value: unknown) => JSON.stringify(value, BufferJSON.replacer);
const deserialize = (text: string): unknown => JSON.parse(text, BufferJSON.reviver);

type SignalKeyWriter = Batcher<{ collectionName: string; writes: SignalKeyWrite[] }, void>;

/** `keys.set` calls (of any accounts) sent together in one batch write, at most. */
const KEY_WRITE_CALLERS_PER_REQUEST = 25;
/**
 * Batch writes of signal keys out at once, per table. A collection is in one of them at most,
 * so its writes land in order; other accounts' writes go beside it (with a single batch out at
 * a time, the pre-keys of a thousand accounts linked at once queued for minutes behind one
 * another, and a stop waited for them all).
 */
const KEY_WRITES_IN_FLIGHT = 8;
const signalKeyWritersFor = perTable(
  (table): SignalKeyWriter =>
    createBatcher({
      maxBatch: KEY_WRITE_CALLERS_PER_REQUEST,
      lingerMs: 0,
      maxInFlight: KEY_WRITES_IN_FLIGHT,
      orderKeyOf: (call) => call.collectionName,
      async send(calls) {
        // The accounts' writes together, in the table's shared requests (beside the write-ahead
        // records and the message rows of the same moment); a key written twice keeps the later value.
        await writeSignalKeysOfCollections(table, calls);
        return calls.map(() => undefined);
      },
    }),
);

/** Absent keys remembered per collection, at most; the least recently asked for go first. */
const KNOWN_ABSENT_LIMIT = 1_000;
/**
 * Signal keys (sessions, sender keys, pre-keys, mappings) kept in memory per account, at most, and
 * for how long: Baileys' own cache keeps every key for 5 minutes however many there are.
 */
const SIGNAL_KEY_CACHE_LIMIT = 512;
const SIGNAL_KEY_CACHE_TTL_MS = 5 * 60_000;

const signalKeyCache = (): CacheStore => boundedCacheStore('signal-keys', SIGNAL_KEY_CACHE_LIMIT, SIGNAL_KEY_CACHE_TTL_MS);

function keyStoreFor(table: Table, collectionName: string, gate: WriteGate): SignalKeyStore {
  const writer = signalKeyWritersFor(table);
  // Baileys' cache in front of this store keeps found keys only, and looks up some absent ones
  // (such as sessions or mappings not made yet) on every message. This process is the only
  // writer of the collection while it holds the account's lease, and every write passes
  // through set() below, so an absent key stays absent until set() says otherwise.
  const knownAbsent = new BoundedCache<string, true>('signal-keys-absent', KNOWN_ABSENT_LIMIT);
  const absentKey = (type: string, id: string) => `${type}\u0000${id}`;
  /** Counts set() calls: a read that overlapped one proves nothing about absence. */
  let writesStarted = 0;
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const toRead = ids.filter((id) => !knownAbsent.has(absentKey(type, id)));
      const writesBefore = writesStarted;
      const stored = toRead.length > 0 ? await readSignalKeys(table, collectionName, type, toRead) : {};
      for (const id of toRead) {
        if (stored[id] !== undefined || writesStarted !== writesBefore) continue;
        knownAbsent.set(absentKey(type, id), true);
      }
      const values: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const [id, text] of Object.entries(stored)) {
        const parsed = deserialize(text);
        // Baileys expects the protobuf object for app-state keys, not the plain JSON shape.
        values[id] = (
          type === 'app-state-sync-key' ? proto.Message.AppStateSyncKeyData.fromObject(parsed as Record<string, unknown>) : parsed
        ) as SignalDataTypeMap[T];
      }
      return values;
    },
    async set(data: SignalDataSet) {
      const writes: SignalKeyWrite[] = [];
      for (const [type, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          writes.push({ type, id, value: value ? serialize(value) : null });
        }
      }
      if (writes.length === 0) return;
      // A Baileys transaction that was under way when the session closed commits after it: its
      // keys would land over the next owner's. It fails instead (its message was not receipted,
      // so WhatsApp delivers it again there).
      if (!gate.open) throw new AuthStateClosedError(collectionName);
      writesStarted += 1;
      for (const w of writes) knownAbsent.delete(absentKey(w.type, w.id));
      const write = writer.add({ collectionName, writes });
      gate.inFlight.add(write);
      await write.finally(() => gate.inFlight.delete(write));
      for (const w of writes) if (w.value === null) knownAbsent.set(absentKey(w.type, w.id), true);
    },
  };
}

export async function loadDynamoAuthState(table: Table, collectionName: string, logger: Logger): Promise<DynamoAuthState> {
  const storedCreds = await readCreds(table, collectionName);
  const creds: AuthenticationCreds = storedCreds ? (deserialize(storedCreds) as AuthenticationCreds) : initAuthCreds();
  const gate: WriteGate = { open: true, inFlight: new Set() };
  const state: AuthenticationState = {
    creds,
    keys: makeCacheableSignalKeyStore(keyStoreFor(table, collectionName, gate), logger, signalKeyCache()),
  };

  const writes = new SerialQueue();
  // `flush()` reports the last write's failure, as the write itself does to its caller.
  let lastWrite: Promise<void> = Promise.resolve();
  /** The creds as last stored, serialized (a final save is skipped when they did not change). */
  let stored = storedCreds;
  const saveCreds = () => {
    if (!gate.open) {
      logger.warn('creds changed after the session closed: not written (the next owner of the account keeps its own)');
      return Promise.resolve();
    }
    lastWrite = writes.run(async () => {
      const text = serialize(state.creds);
      await writeCreds(table, collectionName, text);
      stored = text;
    });
    return lastWrite;
  };
  /** Closes the gate (nothing written from now on) and resolves once what was started is stored. */
  const shut = async (finalCreds: boolean) => {
    // The events Baileys emits while its socket closes come after the dispatcher detached: the
    // creds it changed meanwhile (a pre-key generated for a retry) are saved from memory here.
    if (gate.open && finalCreds && serialize(state.creds) !== stored) saveCreds();
    gate.open = false;
    await Promise.allSettled([...gate.inFlight]);
    // Creds writes run one after another: the last one queued settles after every earlier one.
    await lastWrite;
  };

  return {
    state,
    isLinked: () => Boolean(state.creds.me?.id),
    saveCreds,
    flush: () => lastWrite,
    close: (options = {}) => shut(options.saveCreds ?? true),
    async clear() {
      await shut(false).catch(() => undefined);
      await clearAuthState(table, collectionName);
    },
  };
}
