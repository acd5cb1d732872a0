import { shardOf } from '../../core/shards.js';
import type { ShardLease } from '../../core/store/shard-leases.js';
import { assignShards } from './shard-assignment.js';

export interface ShareInput {
  me: string;
  /** Connectors with a live heartbeat (this one is counted whether listed or not). */
  connectors: readonly string[];
  leases: readonly ShardLease[];
  /** Running accounts per shard (its length is the shard count): see accountsPerShard. */
  weights: readonly number[];
  now: number;
}

export interface SharePlan {
  /** Free shards to try to acquire (conditional writes decide races with other connectors). */
  take: number[];
  /** Held shards to hand over gracefully, each to the connector that should hold it. */
  give: { shard: number; heir: string }[];
}

/**
 * One connector's move in a round of rebalancing (docs/design.md, Scale-out): the assignment
 * every connector computes alike (shard-assignment.ts), then what it means for this one. A
 * shard stays with its live holder as the starting point; a shard handed over and not yet taken
 * counts as its heir's, so that the others plan with it where it is going; a live lease of a
 * connector whose heartbeat is gone blocks its shard until the lease expires.
 */
export function planShare(input: ShareInput): SharePlan {
  const { me, now } = input;
  const live = new Set([...input.connectors, me]);
  const { holders, leased } = resolveHolders(input.leases, live, input.weights.length, now);
  const target = assignShards({ connectors: [...live], weights: input.weights, holders });

  const take: number[] = [];
  const give: SharePlan['give'] = [];
  for (let shard = 0; shard < input.weights.length; shard++) {
    const to = target.get(shard);
    const holder = leased.get(shard);
    if (holder === me && to !== undefined && to !== me) give.push({ shard, heir: to });
    if (holder === undefined && to === me) take.push(shard);
  }
  return { take, give };
}

/**
 * Where this connector's shards should go if it left now: each to the connector that would then
 * hold it (used on a stop, so that the others need not work it out from free shards).
 */
export function heirsOnLeaving(input: ShareInput): Map<number, string> {
  const others = new Set(input.connectors.filter((id) => id !== input.me));
  const { holders, leased } = resolveHolders(input.leases, others, input.weights.length, input.now);
  const target = assignShards({ connectors: [...others], weights: input.weights, holders });
  const heirs = new Map<number, string>();
  for (const [shard, holder] of leased) {
    const heir = target.get(shard);
    if (holder === input.me && heir !== undefined) heirs.set(shard, heir);
  }
  return heirs;
}

/** Running accounts per shard, from the ids of the accounts that should run. */
export function accountsPerShard(accountIds: readonly string[], shardCount: number): number[] {
  const weights = new Array<number>(shardCount).fill(0);
  for (const id of accountIds) weights[shardOf(id, shardCount)]! += 1;
  return weights;
}

/**
 * `holders`: the live connector each shard is with (its live lease, or the heir of a handed-over
 * one); `leased`: the owner of every live lease, live connector or not.
 */
function resolveHolders(leases: readonly ShardLease[], live: ReadonlySet<string>, shardCount: number, now: number) {
  const holders = new Map<number, string>();
  const leased = new Map<number, string>();
  for (const lease of leases) {
    if (lease.shard >= shardCount) continue;
    if (lease.until >= now) {
      leased.set(lease.shard, lease.owner);
      if (live.has(lease.owner)) holders.set(lease.shard, lease.owner);
    } else if (lease.heir !== undefined && live.has(lease.heir)) {
      holders.set(lease.shard, lease.heir);
    }
  }
  return { holders, leased };
}
