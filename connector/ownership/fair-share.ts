import type { ShardLease } from '../../core/store/connectors.js';

export interface ShareInput {
  me: string;
  /** Connectors with a live heartbeat (this one included or not: it is counted either way). */
  connectors: string[];
  leases: ShardLease[];
  shardCount: number;
  now: number;
}

export interface SharePlan {
  /** Free shards to try to acquire (conditional writes settle races with other connectors). */
  take: number[];
  /** Held shards to hand over gracefully. */
  give: number[];
}

/**
 * One connector's move in a round of rebalancing (docs/design.md, Scale-out). With S shards and
 * N live connectors everyone ends up with floor(S/N) or ceil(S/N):
 * - above ceil: give the excess;
 * - above floor while a live connector holds fewer than floor (a newcomer): give one per round;
 * - below floor: take free shards up to ceil;
 * - between floor and ceil: take a free shard only when nobody is below floor (leftovers), so
 *   that shards given up for a newcomer go to it.
 * A lease of a connector whose heartbeat is gone still counts until it expires.
 */
export function planShare(input: ShareInput): SharePlan {
  const { me, leases, shardCount, now } = input;
  const connectors = new Set([...input.connectors, me]);
  const min = Math.floor(shardCount / connectors.size);
  const max = Math.ceil(shardCount / connectors.size);

  const held = new Map<string, number[]>();
  const taken = new Set<number>();
  for (const lease of leases) {
    if (lease.shard >= shardCount || lease.until < now) continue;
    taken.add(lease.shard);
    held.set(lease.owner, [...(held.get(lease.owner) ?? []), lease.shard]);
  }
  const mine = (held.get(me) ?? []).sort((a, b) => a - b);
  const someoneShort = [...connectors].some((id) => id !== me && (held.get(id)?.length ?? 0) < min);

  if (mine.length > max) return { take: [], give: mine.slice(max) };
  if (mine.length > min && someoneShort) return { take: [], give: mine.slice(-1) };

  const free = Array.from({ length: shardCount }, (_, shard) => shard).filter((shard) => !taken.has(shard));
  const wanted = mine.length < min ? max - mine.length : someoneShort ? 0 : Math.min(1, max - mine.length);
  // Each connector starts looking at its own offset, so that several taking at once rarely collide.
  const offset = [...connectors].sort().indexOf(me) * Math.max(1, min);
  const ordered = [...free.filter((shard) => shard >= offset), ...free.filter((shard) => shard < offset)];
  return { take: ordered.slice(0, wanted), give: [] };
}
