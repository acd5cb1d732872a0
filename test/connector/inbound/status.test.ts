import { describe, expect, it } from 'vitest';
import { cacheSizes } from '../../../core/bounded-cache.js';
import { EarlyStatuses } from '../../../connector/inbound/status.js';

describe('early receipts (connector/inbound/status.ts)', () => {
  it('hold at most 10,000 messages, are taken once, expire after 10 minutes, and show in cacheSizes', () => {
    const early = new EarlyStatuses();
    early.remember('m1', { status: 'delivered', at: 1 }, 0);
    early.remember('m1', { status: 'read', at: 2 }, 1);
    // A peek leaves them (a send settled by its receipt looks without taking).
    expect(early.peek('m1', 2)).toHaveLength(2);
    expect(early.take('m1', 2)).toEqual([
      { status: 'delivered', at: 1 },
      { status: 'read', at: 2 },
    ]);
    expect(early.take('m1', 3)).toEqual([]);
    early.remember('old', { status: 'read', at: 0 }, 0);
    early.remember('older', { status: 'read', at: 0 }, 0);
    // Longer than a command's visibility timeout (120 s): an interrupted send's receipt still counts then.
    expect(early.peek('old', 5 * 60_000)).toHaveLength(1);
    expect(early.take('older', 10 * 60_000 + 1)).toEqual([]);
    for (let i = 0; i < 10_005; i++) early.remember(`k${i}`, { status: 'delivered', at: i }, 10);
    const size = cacheSizes()['early-statuses'];
    expect(size?.maxEntries).toBeGreaterThanOrEqual(10_000);
    expect(size?.entries).toBeLessThanOrEqual(size?.maxEntries ?? 0);
    expect(early.take('k0', 11)).toEqual([]);
    expect(early.take('k10004', 11)).toEqual([{ status: 'delivered', at: 10_004 }]);
  });
});
