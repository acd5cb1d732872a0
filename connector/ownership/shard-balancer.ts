import type { Logger } from '../../core/logger.js';
import { acquireShard, handShard, listShardLeases, liveConnectors, releaseShard, renewShard } from '../../core/store/connectors.js';
import type { Table } from '../../core/store/table.js';
import { heirsOnLeaving, planShare, type ShareInput } from './fair-share.js';

export interface ShardBalancerDeps {
  table: Table;
  ownerId: string;
  /** This connector's heartbeat (heartbeat.ts), written before the first round: a stop marks it leaving. */
  heartbeat: { markLeaving(): Promise<void> };
  shardCount: number;
  leaseTtlMs: number;
  /** Round period: renewals, rebalancing. */
  everyMs: number;
  logger: Logger;
  /**
   * Running accounts per shard as last listed (fair-share.ts accountsPerShard): what is
   * balanced. Undefined until a first listing: no rebalancing before, as all-zero weights would
   * hand shards away for nothing.
   */
  weights(): readonly number[] | undefined;
  /** The shards held, kept up to date here (the caller reads it to know which accounts are its own). */
  owned: Set<number>;
  /** Shards just acquired: resume their accounts, then poll the command queues of those still held (it runs beside the rounds). */
  onAcquired(shards: number[]): Promise<void>;
  /**
   * A shard being given up (or already lost): stop polling its queue, finish its commands in
   * flight, close its sockets and release its account leases. The shard lease is released after.
   */
  onReleasing(shard: number): Promise<void>;
}

export interface ShardBalancer {
  /** Rounds completed (tests and benches wait on it instead of sleeping). */
  readonly rounds: number;
  /** Marks the heartbeat leaving, then hands every shard over to its heir: the heirs take them at their next round. */
  stop(): Promise<void>;
}

/**
 * The fair-share loop of one connector (docs/design.md, Scale-out): every `everyMs` it renews
 * its shard leases, reads everyone's heartbeats (written by heartbeat.ts) and shard leases, and
 * gives up or takes shards by connector/ownership/fair-share.ts. Rounds never overlap. The first
 * round has run when `startShardBalancer` resolves.
 */
export async function startShardBalancer(deps: ShardBalancerDeps): Promise<ShardBalancer> {
  const { table, ownerId, shardCount, leaseTtlMs, logger } = deps;
  const { owned } = deps;
  let stopped = false;
  let rounds = 0;
  /** The acquired shards being started, one acquisition after another. */
  let resuming: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  /**
   * Shards being handed over, with their heir: still renewed (a slow hand-over must not let them
   * expire), planned with as the heir's (or nobody's), never taken back meanwhile.
   */
  const releasing = new Map<number, { work: Promise<void>; heir: string | undefined }>();
  const giveUp = (shard: number, why: 'rebalance' | 'lost' | 'stop', heir?: string): Promise<void> => {
    owned.delete(shard);
    const existing = releasing.get(shard);
    if (existing) return existing.work;
    const work = (async () => {
      try {
        await deps.onReleasing(shard);
      } catch (error) {
        logger.error({ err: error, shard }, 'handing a shard over failed');
      }
      if (why !== 'lost') await (heir ? handShard(table, shard, ownerId, heir) : releaseShard(table, shard, ownerId));
      logger.info({ shard, why, heir }, 'shard given up');
    })().finally(() => releasing.delete(shard));
    releasing.set(shard, { work, heir });
    return work;
  };

  /** Everyone's heartbeats and shard leases, with this connector's hand-overs in flight as their heir's. */
  async function shareInput(listed: readonly number[]): Promise<ShareInput> {
    const [connectors, found] = await Promise.all([liveConnectors(table), listShardLeases(table)]);
    const leases = found.map((lease) => {
      const handing = releasing.get(lease.shard);
      return handing ? { ...lease, owner: handing.heir ?? '' } : lease;
    });
    const weights = Array.from({ length: shardCount }, (_, shard) => listed[shard] ?? 0);
    return { me: ownerId, connectors, leases, weights, now: Date.now() };
  }

  async function round(): Promise<void> {
    const now = Date.now();
    for (const shard of [...owned, ...releasing.keys()]) {
      if (await renewShard(table, shard, ownerId, leaseTtlMs, now)) continue;
      if (!owned.has(shard)) continue;
      logger.warn({ shard }, 'shard lease lost to another connector');
      void giveUp(shard, 'lost');
    }
    const listed = deps.weights();
    if (stopped || !listed) return;
    const input = await shareInput(listed);
    const plan = planShare(input);
    // Hand-overs run beside the rounds, so that renewals never wait for one.
    for (const { shard, heir } of plan.give) void giveUp(shard, 'rebalance', heir);
    const wanted = stopped ? [] : plan.take.filter((shard) => !releasing.has(shard));
    const won = await Promise.all(wanted.map((shard) => acquireShard(table, shard, ownerId, leaseTtlMs)));
    const acquired = wanted.filter((_, index) => won[index]);
    for (const shard of acquired) owned.add(shard);
    if (acquired.length > 0) {
      logger.info({ shards: acquired, owned: owned.size, connectors: input.connectors.length }, 'shards acquired');
      // Resuming a shard's accounts takes about a second each under load: it runs beside the
      // rounds (one resume at a time), so that the heartbeat and the renewals never wait for it.
      // Waiting, a connector taking 60 accounts let its leases expire and lost its shards again.
      resuming = resuming
        .then(() => deps.onAcquired(acquired))
        .catch((error: unknown) => logger.error({ err: error, shards: acquired }, 'starting acquired shards failed'));
    }
  }

  /** Where each held shard goes on a stop; none named (the others then share them out) when the read fails. */
  async function heirsOfMine(): Promise<Map<number, string>> {
    const listed = deps.weights();
    if (!listed) return new Map();
    try {
      return heirsOnLeaving(await shareInput(listed));
    } catch (error) {
      logger.warn({ err: error }, 'reading the other connectors before a stop failed');
      return new Map();
    }
  }

  const loop = async () => {
    try {
      await round();
    } catch (error) {
      logger.error({ err: error }, 'shard balancing round failed');
    }
    rounds += 1;
    if (!stopped) timer = setTimeout(() => void (current = loop()), deps.everyMs);
  };
  let current = loop();
  await current;
  // Started once the first share runs (the later ones start while the rounds go on).
  await resuming;

  return {
    get rounds() {
      return rounds;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
      const heirs = await heirsOfMine();
      // Marked leaving first: planning without this connector, the others never hand it a shard.
      // The heartbeat itself stays until the account leases it holds are released.
      await deps.heartbeat.markLeaving().catch((error: unknown) => logger.warn({ err: error }, 'marking the heartbeat leaving failed'));
      await Promise.all([
        ...[...owned].map((shard) => giveUp(shard, 'stop', heirs.get(shard))),
        ...[...releasing.values()].map(({ work }) => work),
      ]);
    },
  };
}
