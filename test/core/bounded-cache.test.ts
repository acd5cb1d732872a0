import { describe, expect, it } from 'vitest';
import { BoundedCache, cacheSizes, sweepExpired } from '../../core/bounded-cache.js';

describe('BoundedCache', () => {
  it('never holds more than maxEntries after more distinct keys; the least recently used go first', () => {
    const cache = new BoundedCache<string, number>('test-lru', 3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(1); // 'a' is now the most recent: 'b' is the oldest
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, i);
    expect(cache.size).toBe(3);
    expect(cache.get('k9')).toBe(9);
    expect(cache.get('a')).toBeUndefined();

    const small = new BoundedCache<string, number>('test-lru-order', 2);
    small.set('a', 1);
    small.set('b', 2);
    small.get('a');
    small.set('c', 3);
    expect(small.has('a')).toBe(true);
    expect(small.has('b')).toBe(false);
    expect(small.has('c')).toBe(true);
  });

  it('an entry older than the ttl reads as absent', () => {
    const cache = new BoundedCache<string, string>('test-ttl', 10, 1000);
    cache.set('x', 'v', 0);
    expect(cache.get('x', 1000)).toBe('v');
    expect(cache.get('x', 1001)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('the sweep drops expired entries nobody reads (an idle account), and keeps the rest and caches without a ttl', () => {
    const now = Date.now();
    const idle = new BoundedCache<string, string>('test-sweep', 10, 1000);
    idle.set('old', 'v', now - 1001);
    idle.set('read-often', 'v', now - 1500);
    idle.get('read-often', now - 1400); // a read moves it, its age stays
    idle.set('fresh', 'v', now - 10);
    const forever = new BoundedCache<string, string>('test-sweep-no-ttl', 10);
    forever.set('k', 'v', 0);
    sweepExpired(now);
    expect(idle.size).toBe(1);
    expect(idle.get('fresh', now)).toBe('v');
    expect(forever.size).toBe(1);
    expect(cacheSizes()['test-sweep']?.entries).toBe(1);
  });

  it('cacheSizes sums the instances of a name and their bounds', () => {
    const first = new BoundedCache<number, number>('test-sizes', 5);
    const second = new BoundedCache<number, number>('test-sizes', 5);
    for (let i = 0; i < 8; i++) {
      first.set(i, i);
      second.set(i, i);
    }
    expect(cacheSizes()['test-sizes']).toEqual({ instances: 2, entries: 10, maxEntries: 10 });
    expect(() => new BoundedCache('test-bad', 0)).toThrow(/positive integer/);
  });
});
