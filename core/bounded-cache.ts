/**
 * A cache that never holds more than `maxEntries`: least recently used entries go first, and an
 * entry older than `ttlMs` (when given) reads as absent. Every cache of the connector is one of
 * these, so memory does not grow with the number of contacts or messages an account has seen.
 *
 * Each cache is registered under a name (several instances may share one, e.g. one per account);
 * `cacheSizes()` sums their entries per name, for metrics. Expired entries are also dropped
 * unread, once a minute (`sweepExpired`): an idle account's cache empties instead of holding its
 * last keys for good (at 1,000 accounts, ~51 decoded Signal sessions each stayed after the traffic).
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, { value: V; at: number }>();

  constructor(
    name: string,
    readonly maxEntries: number,
    private readonly ttlMs?: number,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new Error(`cache ${name}: maxEntries must be a positive integer`);
    register(name, this);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.ttlMs !== undefined && now - entry.at > this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  has(key: K, now = Date.now()): boolean {
    return this.get(key, now) !== undefined;
  }

  set(key: K, value: V, now = Date.now()): void {
    this.entries.delete(key);
    this.entries.set(key, { value, at: now });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry older than the ttl (none without one). */
  sweep(now = Date.now()): void {
    const { ttlMs } = this;
    if (ttlMs === undefined) return;
    // In order of use, not of age (a read moves an entry, not its time): the whole map is looked at.
    for (const [key, entry] of this.entries) if (now - entry.at > ttlMs) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/** Instances by name, held weakly: an account's caches go away with the account. */
interface Sized {
  readonly size: number;
  readonly maxEntries: number;
  sweep(now: number): void;
}

const registry = new Map<string, Set<WeakRef<Sized>>>();
/** How often expired entries are dropped unread. */
const SWEEP_EVERY_MS = 60_000;
let sweeper: NodeJS.Timeout | undefined;

function register(name: string, cache: Sized): void {
  let instances = registry.get(name);
  if (!instances) registry.set(name, (instances = new Set()));
  instances.add(new WeakRef(cache));
  if (!sweeper) {
    sweeper = setInterval(() => sweepExpired(), SWEEP_EVERY_MS);
    sweeper.unref();
  }
}

/** The caches of a name still alive; the references of collected ones are dropped on the way. */
function* alive(instances: Set<WeakRef<Sized>>): Generator<Sized> {
  for (const ref of instances) {
    const cache = ref.deref();
    if (cache) yield cache;
    else instances.delete(ref);
  }
}

/** Every cache of the process drops its expired entries (the minute's sweep; tests call it too). */
export function sweepExpired(now = Date.now()): void {
  for (const instances of registry.values()) for (const cache of alive(instances)) cache.sweep(now);
}

export interface CacheSize {
  /** Caches alive under this name (e.g. one per account). */
  instances: number;
  /** Entries held by all of them together. */
  entries: number;
  /** Bound on those entries (the sum of each instance's bound). */
  maxEntries: number;
}

/** Current sizes of every bounded cache in this process, by name (for /metrics). */
export function cacheSizes(): Record<string, CacheSize> {
  const sizes: Record<string, CacheSize> = {};
  for (const [name, instances] of registry) {
    const size: CacheSize = { instances: 0, entries: 0, maxEntries: 0 };
    for (const cache of alive(instances)) {
      size.instances += 1;
      size.entries += cache.size;
      size.maxEntries += cache.maxEntries;
    }
    sizes[name] = size;
  }
  return sizes;
}
