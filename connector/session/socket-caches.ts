import type { SocketConfig, WASocket } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
import { boundedCacheStore } from '../auth/cache-store.js';

/**
 * The caches Baileys keeps per socket, bounded. Left to itself Baileys makes each a NodeCache
 * with a TTL and no size limit (retry counters and placeholder resends for an hour, device
 * lists and call offers for 5 minutes) and keeps LID/PN mappings for 3 days however many: each
 * grows with the contacts and messages an account sees in that time. Here each is a
 * BoundedCache, so its size and bound show in the metrics (cacheSizes()).
 */

const MINUTE = 60_000;

/** Entries per account and lifetimes; the lifetimes are Baileys' own (DEFAULT_CACHE_TTLS). */
const SOCKET_CACHE_BOUNDS = {
  /** Device lists of the users the account sent to lately (a send re-queries a missing one). */
  userDevices: { name: 'baileys-user-devices', maxEntries: 1_000, ttlMs: 5 * MINUTE },
  /** Retry counts of messages that failed to decrypt. */
  msgRetryCounter: { name: 'baileys-msg-retry-counters', maxEntries: 1_000, ttlMs: 60 * MINUTE },
  callOffer: { name: 'baileys-call-offers', maxEntries: 100, ttlMs: 5 * MINUTE },
  placeholderResend: { name: 'baileys-placeholder-resends', maxEntries: 1_000, ttlMs: 60 * MINUTE },
  /** LID <-> PN mappings (two entries per contact); they are also in the key store, read on a miss. */
  lidMappings: { name: 'baileys-lid-mappings', maxEntries: 2_000, ttlMs: 3 * 24 * 60 * MINUTE },
} as const;

type CacheConfig = Pick<SocketConfig, 'userDevicesCache' | 'msgRetryCounterCache' | 'callOfferCache' | 'placeholderResendCache'>;

/** The socket config caches of one account; made once per session, so they outlive a reconnect as Baileys' own would not. */
export function socketCaches(): CacheConfig {
  const store = (bound: { name: string; maxEntries: number; ttlMs: number }) =>
    boundedCacheStore(bound.name, bound.maxEntries, bound.ttlMs);
  return {
    userDevicesCache: store(SOCKET_CACHE_BOUNDS.userDevices),
    msgRetryCounterCache: store(SOCKET_CACHE_BOUNDS.msgRetryCounter),
    callOfferCache: store(SOCKET_CACHE_BOUNDS.callOffer),
    placeholderResendCache: store(SOCKET_CACHE_BOUNDS.placeholderResend),
  };
}

/** What Baileys' LIDMappingStore calls on its `mappingCache` (an lru-cache with a TTL and no size limit). */
interface MappingCache {
  get(key: string): string | undefined;
  set(key: string, value: string): unknown;
  has(key: string): boolean;
  delete(key: string): unknown;
  clear(): void;
}

/**
 * Replaces the LID mapping store's cache with a bounded one, right after makeWASocket (before
 * the socket connects, so nothing is in it yet). The store is not configurable: its cache is a
 * public field of `signalRepository.lidMapping`. When Baileys changes that shape this does
 * nothing (Baileys keeps its own cache) rather than fail.
 */
export function boundLidMappingCache(sock: WASocket): boolean {
  // `mappingCache` is private in the typings, a plain field at runtime.
  const store = (sock.signalRepository as unknown as { lidMapping?: { mappingCache?: unknown } }).lidMapping;
  if (!store || typeof store.mappingCache !== 'object' || store.mappingCache === null) return false;
  const { name, maxEntries, ttlMs } = SOCKET_CACHE_BOUNDS.lidMappings;
  const cache = new BoundedCache<string, string>(name, maxEntries, ttlMs);
  const bounded: MappingCache = {
    get: (key) => cache.get(key),
    set: (key, value) => cache.set(key, value),
    has: (key) => cache.has(key),
    delete: (key) => cache.delete(key),
    clear: () => cache.clear(),
  };
  store.mappingCache = bounded;
  return true;
}
