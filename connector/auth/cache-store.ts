import type { CacheStore } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';

/**
 * Baileys' cache interface over a BoundedCache, so that its size and bound show in the metrics.
 * Here beside the auth state's signal key cache, its first user; the session's socket caches
 * (connector/session/socket-caches.ts) use it too, and the session already depends on auth.
 */
export function boundedCacheStore(name: string, maxEntries: number, ttlMs?: number): CacheStore {
  const cache = new BoundedCache<string, unknown>(name, maxEntries, ttlMs);
  return {
    get: <T>(key: string) => cache.get(key) as T | undefined,
    set: (key, value) => cache.set(key, value),
    del: (key) => cache.delete(key),
    flushAll: () => cache.clear(),
  };
}
