import { describe, expect, it } from 'vitest';
import { accountsPerShard, heirsOnLeaving, planShare } from '../../../connector/ownership/fair-share.js';
import { assignShards, BALANCE_SLACK } from '../../../connector/ownership/shard-assignment.js';
import type { ShardLease } from '../../../core/store/shard-leases.js';

/**
 * The account-weighted shard assignment (docs/design.md, Scale-out), on account ids hashed the
 * way the gateway hashes them (core/shards.ts).
 */
const SHARDS = 32;
const idsOf = (count: number, prefix = 'account') => Array.from({ length: count }, (_, n) => `${prefix}-${n}`);
const connectorsOf = (count: number) => Array.from({ length: count }, (_, n) => `connector-${n}`);

/** Accounts per connector under an assignment (every connector listed, 0 when it has none). */
function loadsOf(assignment: Map<number, string>, weights: readonly number[], connectors: string[]): Map<string, number> {
  const loads = new Map(connectors.map((id) => [id, 0]));
  for (const [shard, id] of assignment) loads.set(id, (loads.get(id) ?? 0) + weights[shard]!);
  return loads;
}

/** The largest distance from the mean, as a share of it. */
function deviation(loads: Map<string, number>): number {
  const values = [...loads.values()];
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return Math.max(...values.map((value) => Math.abs(value - mean) / mean));
}

/** Shards whose connector differs between two assignments, and the accounts they carry. */
function movesBetween(before: Map<number, string>, after: Map<number, string>, weights: readonly number[]) {
  const moved = [...after].filter(([shard, id]) => before.get(shard) !== id).map(([shard]) => shard);
  return { shards: moved, accounts: moved.reduce((sum, shard) => sum + weights[shard]!, 0) };
}

describe('account-weighted shard assignment', () => {
  const weights = accountsPerShard(idsOf(300), SHARDS);

  it('300 accounts over 32 shards: the hash alone leaves shards uneven (why shard counts are not enough)', () => {
    expect(weights.reduce((sum, count) => sum + count, 0)).toBe(300);
    expect(Math.max(...weights) - Math.min(...weights)).toBeGreaterThan(5);
  });

  it('3 connectors: every shard assigned once, each connector within ±10 % of the mean, and the result is settled', () => {
    const connectors = connectorsOf(3);
    const assignment = assignShards({ connectors, weights, holders: new Map() });
    expect([...assignment.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: SHARDS }, (_, shard) => shard));
    expect(deviation(loadsOf(assignment, weights, connectors))).toBeLessThanOrEqual(0.1);
    // Recomputed from itself, nothing moves: a settled assignment does not churn.
    expect(assignShards({ connectors, weights, holders: assignment })).toEqual(assignment);
  });

  it('a 4th connector joins: it gets its share, the moves are few and all accounts stay balanced', () => {
    const before = assignShards({ connectors: connectorsOf(3), weights, holders: new Map() });
    const connectors = connectorsOf(4);
    const after = assignShards({ connectors, weights, holders: before });
    const loads = loadsOf(after, weights, connectors);
    expect(deviation(loads)).toBeLessThanOrEqual(0.1);
    const moves = movesBetween(before, after, weights);
    // The newcomer needs 75 accounts; little more than that moves.
    expect(moves.accounts).toBeGreaterThanOrEqual(loads.get('connector-3')!);
    expect(moves.accounts).toBeLessThanOrEqual(1.5 * 75);
    expect(moves.shards.length).toBeLessThanOrEqual(12);
  });

  it('a connector leaves: its shards are spread over the others, theirs mostly stay', () => {
    const before = assignShards({ connectors: connectorsOf(3), weights, holders: new Map() });
    const survivors = connectorsOf(3).slice(1);
    const held = new Map([...before].filter(([, id]) => id !== 'connector-0'));
    const after = assignShards({ connectors: survivors, weights, holders: held });
    expect(deviation(loadsOf(after, weights, survivors))).toBeLessThanOrEqual(0.1);
    const orphans = [...before].filter(([, id]) => id === 'connector-0').map(([shard]) => shard);
    for (const id of survivors) expect(orphans.some((shard) => after.get(shard) === id)).toBe(true);
    const reshuffled = [...held].filter(([shard, id]) => after.get(shard) !== id);
    expect(reshuffled.length).toBeLessThanOrEqual(2);
  });

  it('an account created in a settled assignment moves nothing', () => {
    const connectors = connectorsOf(3);
    const settled = assignShards({ connectors, weights, holders: new Map() });
    const grown = weights.map((count, shard) => (shard === 7 ? count + 1 : count));
    expect(assignShards({ connectors, weights: grown, holders: settled })).toEqual(settled);
  });

  it('1 to 10 connectors, 0 to 1000 accounts: settled, and as even as shards allow', () => {
    for (const accounts of [0, 1, 5, 30, 300, 1000]) {
      const counts = accountsPerShard(idsOf(accounts, `n${accounts}`), SHARDS);
      for (let size = 1; size <= 10; size++) {
        const connectors = connectorsOf(size);
        const assignment = assignShards({ connectors, weights: counts, holders: new Map() });
        expect(assignment.size).toBe(SHARDS);
        expect(assignShards({ connectors, weights: counts, holders: assignment })).toEqual(assignment);
        const loads = [...loadsOf(assignment, counts, connectors).values()];
        // Settled: either within the slack, or no shard small enough to even the pair further.
        const slack = (BALANCE_SLACK * accounts) / size;
        expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(Math.max(slack, ...counts));
        if (accounts === 0) {
          // No accounts at all: shards spread by count, as before accounts existed.
          const shardCounts = connectors.map((id) => [...assignment.values()].filter((owner) => owner === id).length);
          expect(Math.max(...shardCounts) - Math.min(...shardCounts)).toBeLessThanOrEqual(1);
        }
      }
    }
  });
});

describe('one connector’s plan from the shared leases', () => {
  const weights = accountsPerShard(idsOf(300), SHARDS);
  const now = 1_000_000;
  const lease = (shard: number, owner: string, until = now + 10_000, heir?: string): ShardLease => ({
    shard,
    owner,
    until,
    ...(heir ? { heir } : {}),
  });

  it('a newcomer takes nothing held; the holders give it shards, each naming it as heir', () => {
    const leases = Array.from({ length: SHARDS }, (_, shard) => lease(shard, shard % 2 === 0 ? 'A' : 'B'));
    const connectors = ['A', 'B', 'C'];
    expect(planShare({ me: 'C', connectors, leases, weights, now })).toEqual({ take: [], give: [] });
    const given = [
      ...planShare({ me: 'A', connectors, leases, weights, now }).give,
      ...planShare({ me: 'B', connectors, leases, weights, now }).give,
    ];
    expect(given.length).toBeGreaterThan(0);
    expect(given.every(({ heir }) => heir === 'C')).toBe(true);
  });

  it('a shard handed to its heir is the heir’s to take, and nobody else’s', () => {
    const leases = Array.from({ length: SHARDS }, (_, shard) => lease(shard, shard % 2 === 0 ? 'A' : 'B'));
    const connectors = ['A', 'B', 'C'];
    const gifts = [
      ...planShare({ me: 'A', connectors, leases, weights, now }).give,
      ...planShare({ me: 'B', connectors, leases, weights, now }).give,
    ];
    const handed = leases.map((l) => {
      const gift = gifts.find(({ shard }) => shard === l.shard);
      return gift ? lease(l.shard, '', 0, gift.heir) : l;
    });
    expect(planShare({ me: 'C', connectors, leases: handed, weights, now }).take).toEqual(
      gifts.map(({ shard }) => shard).sort((a, b) => a - b),
    );
    for (const me of ['A', 'B']) expect(planShare({ me, connectors, leases: handed, weights, now })).toEqual({ take: [], give: [] });
  });

  it('a live lease of a connector without heartbeat blocks its shard until it expires', () => {
    const leases = Array.from({ length: SHARDS }, (_, shard) => lease(shard, shard < 16 ? 'A' : 'gone'));
    expect(planShare({ me: 'A', connectors: ['A'], leases, weights, now }).take).toEqual([]);
    const expired = leases.map((l) => (l.owner === 'gone' ? lease(l.shard, 'gone', now - 1) : l));
    expect(planShare({ me: 'A', connectors: ['A'], leases: expired, weights, now }).take).toEqual(
      Array.from({ length: 16 }, (_, n) => n + 16),
    );
  });

  it('leaving: each held shard is named an heir among the others, spread by accounts', () => {
    const leases = Array.from({ length: SHARDS }, (_, shard) => lease(shard, ['A', 'B', 'C'][shard % 3]!));
    const heirs = heirsOnLeaving({ me: 'A', connectors: ['A', 'B', 'C'], leases, weights, now });
    expect([...heirs.keys()].sort((a, b) => a - b)).toEqual(leases.filter((l) => l.owner === 'A').map((l) => l.shard));
    expect(new Set(heirs.values())).toEqual(new Set(['B', 'C']));
    expect(heirsOnLeaving({ me: 'A', connectors: ['A'], leases, weights, now }).size).toBe(0);
  });
});
