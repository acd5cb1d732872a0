/**
 * Which connector should hold each shard, balanced by running accounts (docs/design.md,
 * "Balance"). Pure and deterministic: every connector computes it from the same shared state
 * (live heartbeats, shard leases, the account list) and so reaches the same answer.
 *
 * 1. Sticky start: a shard stays with the live connector that holds it (or is being handed it).
 * 2. Shards nobody live holds go, heaviest first, to the connector with the fewest accounts
 *    (then the fewest shards): longest-processing-time first.
 * 3. While two connectors differ by more than BALANCE_SLACK of the mean, the move (one shard)
 *    or swap (one shard each way) between such a pair that lowers the sum of squared loads most
 *    is made. Each strictly lowers it, so this ends, and a stable assignment is a fixed point:
 *    recomputed from itself it changes nothing.
 * 4. Shards without accounts (they cost an idle queue poll, no socket) are then spread so that
 *    shard counts differ by at most one where that needs no account to move.
 */
export interface AssignmentInput {
  /** Live connectors (order does not matter). */
  connectors: readonly string[];
  /** Running accounts of each shard; its length is the shard count. */
  weights: readonly number[];
  /** The live connector each shard is with now, where there is one. */
  holders: ReadonlyMap<number, string>;
}

/**
 * How far apart two connectors may be, as a share of the mean, before shards move. Stable
 * within it, every connector is within ±10 % × (N−1)/N of the mean (the target is
 * ±10 %). A wider band would move fewer shards, a narrower one would chase differences finer
 * than a shard (about 9 accounts at 300 accounts over 32 shards) with many moves; small changes
 * (an account created) move nothing.
 */
export const BALANCE_SLACK = 0.1;

interface Load {
  id: string;
  accounts: number;
  shards: Set<number>;
}

/** Orders loads by accounts, then shard count, then id: the first is the least loaded. */
const lighter = (a: Load, b: Load) => a.accounts - b.accounts || a.shards.size - b.shards.size || (a.id < b.id ? -1 : 1);

/** shard -> the connector that should hold it; empty without live connectors. */
export function assignShards(input: AssignmentInput): Map<number, string> {
  const { weights } = input;
  const loads = [...new Set(input.connectors)].sort().map((id): Load => ({ id, accounts: 0, shards: new Set() }));
  if (loads.length === 0) return new Map();
  const byId = new Map(loads.map((load) => [load.id, load]));
  const weight = (shard: number) => weights[shard] ?? 0;
  const move = (shard: number, from: Load | undefined, to: Load) => {
    if (from) {
      from.shards.delete(shard);
      from.accounts -= weight(shard);
    }
    to.shards.add(shard);
    to.accounts += weight(shard);
  };

  const pool: number[] = [];
  for (let shard = 0; shard < weights.length; shard++) {
    const holder = byId.get(input.holders.get(shard) ?? '');
    if (holder) move(shard, undefined, holder);
    else pool.push(shard);
  }
  pool.sort((a, b) => weight(b) - weight(a) || a - b);
  for (const shard of pool) move(shard, undefined, [...loads].sort(lighter)[0]!);

  evenAccounts(loads, weight, move);
  spreadEmptyShards(loads, weight, move);

  const assignment = new Map<number, string>();
  for (const load of loads) for (const shard of load.shards) assignment.set(shard, load.id);
  return assignment;
}

type Move = (shard: number, from: Load, to: Load) => void;

interface Exchange {
  heavy: Load;
  light: Load;
  out: number;
  back?: number;
  /** How much it lowers the sum of squared loads: 2·delta·(gap − delta). */
  gain: number;
}

function evenAccounts(loads: Load[], weight: (shard: number) => number, move: Move): void {
  const total = loads.reduce((sum, load) => sum + load.accounts, 0);
  const slack = (BALANCE_SLACK * total) / loads.length;
  // Bounded although each step strictly lowers the sum of squares: a guard against a bug, not a limit reached.
  for (let step = 0; step < 1000; step++) {
    const best = bestExchange(loads, slack, weight);
    if (!best) return;
    move(best.out, best.heavy, best.light);
    if (best.back !== undefined) move(best.back, best.light, best.heavy);
  }
}

/**
 * Of every pair further apart than `slack`, the move (a shard from the heavier to the lighter)
 * or swap (a shard each way) that lowers the sum of squared loads most; a move wins a tie (one
 * hand-over, not two), then the order of ids and shards. Only what strictly evens a pair counts
 * (0 < delta < gap), so the pair never ends up further apart the other way.
 */
function bestExchange(loads: Load[], slack: number, weight: (shard: number) => number): Exchange | undefined {
  let best: Exchange | undefined;
  const consider = (candidate: Omit<Exchange, 'gain'>, delta: number, gap: number) => {
    if (delta <= 0 || delta >= gap) return;
    const gain = 2 * delta * (gap - delta);
    if (best && (gain < best.gain || (gain === best.gain && (candidate.back !== undefined || best.back === undefined)))) return;
    best = { ...candidate, gain };
  };
  for (const heavy of loads) {
    for (const light of loads) {
      const gap = heavy.accounts - light.accounts;
      if (gap <= slack) continue;
      const outs = [...heavy.shards].sort((a, b) => a - b);
      const backs = [...light.shards].sort((a, b) => a - b);
      for (const out of outs) {
        consider({ heavy, light, out }, weight(out), gap);
        for (const back of backs) consider({ heavy, light, out, back }, weight(out) - weight(back), gap);
      }
    }
  }
  return best;
}

function spreadEmptyShards(loads: Load[], weight: (shard: number) => number, move: Move): void {
  const empties = (load: Load) => [...load.shards].filter((shard) => weight(shard) === 0).sort((a, b) => a - b);
  // Each move narrows the spread of shard counts, so this ends.
  for (;;) {
    const fewest = [...loads].sort((a, b) => a.shards.size - b.shards.size || (a.id < b.id ? -1 : 1))[0]!;
    const donor = loads
      .filter((load) => empties(load).length > 0)
      .sort((a, b) => b.shards.size - a.shards.size || (a.id < b.id ? -1 : 1))[0];
    if (!donor || donor.shards.size - fewest.shards.size < 2) return;
    move(empties(donor).at(-1)!, donor, fewest);
  }
}
