import type { Logger } from '../../core/logger.js';
import {
  acquireShard,
  handShard,
  listShardLeases,
  recordShardRunning,
  releaseShard,
  type ShardLease,
} from '../../core/store/shard-leases.js';
import { signalKeyFormatOf } from '../../core/store/auth-state.js';
import { everyLiveConnectorReads, listHeartbeats, liveConnectors } from '../../core/store/heartbeats.js';
import type { Table } from '../../core/store/table.js';
import { heirsOnLeaving, planShare, type ShareInput } from './fair-share.js';
import type { ConnectorHeartbeat } from './heartbeat.js';

export interface ShardBalancerDeps {
  table: Table;
  ownerId: string;
  /**
   * This connector's heartbeat (heartbeat.ts), registered before the first round: it holds the
   * shard leases (taken with its epoch), its loss gives every shard up at once, a stop marks it
   * leaving.
   */
  heartbeat: Pick<ConnectorHeartbeat, 'epoch' | 'onLost' | 'markLeaving'>;
  shardCount: number;
  /** Round period: rebalancing. */
  everyMs: number;
  logger: Logger;
  /**
   * This connector's count of running accounts (its sessions) in each held shard whose accounts
   * it has resumed: written onto the shard's lease when it changes, where every connector reads
   * it (core/store/shard-leases.ts). What is balanced.
   */
  running(): ReadonlyMap<number, number>;
  /**
   * Running accounts per shard from a listing of every account (fair-share.ts accountsPerShard):
   * read only in a round where some shard has no count yet (a deployment's first start, a shard
   * released without an heir, connectors from before counts), as all-zero weights would hand
   * shards away for nothing.
   */
  listRunning(): Promise<readonly number[]>;
  /** The shards held, kept up to date here (the caller reads it to know which accounts are its own). */
  owned: Set<number>;
  /** Shards just acquired: resume their accounts, then poll the command queues of those still held (it runs beside the rounds). */
  onAcquired(shards: number[]): Promise<void>;
  /**
   * A shard being given up: stop polling its queue, finish its commands in flight, close its
   * sockets and release its account leases (`lost`: the shard may be another connector's
   * already, its leases no longer ours to release). The shard lease is released after.
   */
  onReleasing(shard: number, lost: boolean): Promise<void>;
  /**
   * Wakes the connector that polls `shard`'s command queue (a wake-up saying shards were handed
   * to it: ShardBalancer.wake there). Without it an heir takes a handed shard at its next round,
   * up to `everyMs` later.
   */
  wakeHolderOf?(shard: number): Promise<void>;
}

export interface ShardBalancer {
  /** Rounds completed (tests and benches wait on it instead of sleeping). */
  readonly rounds: number;
  /** Marks the heartbeat leaving, then hands every shard over to its heir, waking each heir to take them at once. */
  stop(): Promise<void>;
  /** Shards were handed to this connector: a round runs now (after the one running, if any), not at its time. */
  wake(): void;
}

/**
 * The fair-share loop of one connector (docs/design.md, Scale-out): every `everyMs` it reads
 * everyone's heartbeats and shard leases, and gives up or takes shards by
 * connector/ownership/fair-share.ts. Rounds never overlap. The first round has run when
 * `startShardBalancer` resolves. The shard leases are held by the heartbeat (heartbeat.ts), not
 * renewed here: when it is lost, every shard is given up at once.
 */
export async function startShardBalancer(deps: ShardBalancerDeps): Promise<ShardBalancer> {
  const { table, ownerId, shardCount, logger } = deps;
  const { owned } = deps;
  let stopped = false;
  let rounds = 0;
  /** The acquired shards being started, one acquisition after another. */
  let resuming: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let inRound = false;
  /** A wake came during a round: the next one runs right after it. */
  let wokenInRound = false;
  /** The shard leases as last read: whose queue reaches an heir. */
  let lastLeases: readonly ShardLease[] = [];

  /**
   * Shards being handed over, with their heir: still held (the heartbeat keeps them while a slow
   * hand-over runs), planned with as the heir's (or nobody's), never taken back meanwhile.
   */
  const releasing = new Map<number, { work: Promise<void>; heir: string | undefined }>();
  const giveUp = (shard: number, why: 'rebalance' | 'lost' | 'stop', heir?: string): Promise<void> => {
    owned.delete(shard);
    const existing = releasing.get(shard);
    if (existing) return existing.work;
    const work = (async () => {
      try {
        await deps.onReleasing(shard, why === 'lost');
      } catch (error) {
        logger.error({ err: error, shard }, 'handing a shard over failed');
      }
      if (why !== 'lost') await (heir ? handShard(table, shard, ownerId, heir) : releaseShard(table, shard, ownerId));
      logger.info({ shard, why, heir }, 'shard given up');
      if (heir && why !== 'lost') await wakeHeir(heir, shard);
    })().finally(() => releasing.delete(shard));
    releasing.set(shard, { work, heir });
    return work;
  };

  /**
   * Tells the heir now, through the queue of a shard it holds: an heir waiting for its next round
   * was most of a SIGTERM hand-over (docs/benchmarks.md, Scale-out). An heir that holds no shard
   * yet (it just started) takes it at its next round. A failed wake-up costs only that wait.
   */
  async function wakeHeir(heir: string, handed: number): Promise<void> {
    if (!deps.wakeHolderOf) return;
    const now = Date.now();
    const polled = lastLeases.find((lease) => lease.owner === heir && lease.until >= now && lease.shard !== handed);
    if (!polled) return;
    await deps.wakeHolderOf(polled.shard).catch((error: unknown) => logger.warn({ err: error, heir }, 'waking the heir failed'));
  }

  // The heartbeat's epoch is over: another connector may take any shard held with it.
  deps.heartbeat.onLost(() => {
    for (const shard of [...owned]) void giveUp(shard, 'lost');
  });

  /**
   * Everyone's heartbeats and shard leases, with this connector's hand-overs in flight as their
   * heir's; `stored`: the leases as read (with their owner's heartbeat's expiry).
   */
  async function shareInput(): Promise<ShareInput & { stored: ShardLease[] }> {
    const heartbeats = await listHeartbeats(table);
    // The round reads every heartbeat anyway: it is also what says when sessions may be stored
    // deflated (a connector from before reads them as absent).
    signalKeyFormatOf(table).deflateSessions = everyLiveConnectorReads(heartbeats, 'deflated-sessions');
    const stored = await listShardLeases(table, heartbeats);
    const connectors = liveConnectors(heartbeats);
    const leases = stored.map((lease) => {
      const handing = releasing.get(lease.shard);
      return handing ? { ...lease, owner: handing.heir ?? '' } : lease;
    });
    lastLeases = stored;
    return { me: ownerId, connectors, leases, weights: await weightsOf(stored), now: Date.now(), stored };
  }

  /**
   * Running accounts per shard: this connector's own counts (written onto its leases first where
   * they changed), the holders' counts on the others; a listing of every account only while some
   * shard has none.
   */
  async function weightsOf(stored: readonly ShardLease[]): Promise<number[]> {
    const counted = new Map<number, number>();
    for (const lease of stored) if (lease.running !== undefined) counted.set(lease.shard, lease.running);
    const writes: Promise<void>[] = [];
    for (const [shard, running] of deps.running()) {
      if (!owned.has(shard)) continue;
      if (counted.get(shard) !== running) writes.push(recordShardRunning(table, shard, ownerId, running));
      counted.set(shard, running);
    }
    await Promise.all(writes).catch((error: unknown) => logger.warn({ err: error }, 'recording shard counts failed'));
    const weights = Array.from({ length: shardCount }, (_, shard) => counted.get(shard));
    if (weights.every((weight) => weight !== undefined)) return weights as number[];
    const listed = await deps.listRunning();
    return Array.from({ length: shardCount }, (_, shard) => listed[shard] ?? 0);
  }

  async function round(): Promise<void> {
    if (stopped) return;
    const input = await shareInput();
    // A held shard whose lease is no longer this connector's (removed by hand, or its epoch
    // over before the loss was noticed) stops here at once.
    const stored = new Map(input.stored.map((lease) => [lease.shard, lease]));
    for (const shard of [...owned]) {
      const lease = stored.get(shard);
      if (lease?.owner === ownerId && lease.until >= input.now) continue;
      logger.warn({ shard }, 'shard lease lost');
      void giveUp(shard, 'lost');
    }
    const plan = planShare(input);
    // Hand-overs run beside the rounds, so that a round never waits for one.
    for (const { shard, heir } of plan.give) void giveUp(shard, 'rebalance', heir);
    const epoch = deps.heartbeat.epoch;
    if (stopped || !epoch) return;
    const wanted = plan.take.filter((shard) => !releasing.has(shard));
    const won = await Promise.all(
      wanted.map((shard) => acquireShard(table, shard, ownerId, epoch, { running: stored.get(shard)?.running })),
    );
    // Taken with an epoch lost meanwhile: that lease is dead to the others, the shard not ours.
    const acquired = deps.heartbeat.epoch === epoch ? wanted.filter((_, index) => won[index]) : [];
    for (const shard of acquired) owned.add(shard);
    if (acquired.length > 0) {
      logger.info({ shards: acquired, owned: owned.size, connectors: input.connectors.length }, 'shards acquired');
      // Resuming a shard's accounts takes about a second each under load: it runs beside the
      // rounds (one resume at a time), so that the rounds never wait for it.
      resuming = resuming
        .then(() => deps.onAcquired(acquired))
        .catch((error: unknown) => logger.error({ err: error, shards: acquired }, 'starting acquired shards failed'));
    }
  }

  /** Where each held shard goes on a stop; none named (the others then share them out) when the read fails. */
  async function heirsOfMine(): Promise<Map<number, string>> {
    try {
      return heirsOnLeaving(await shareInput());
    } catch (error) {
      logger.warn({ err: error }, 'reading the other connectors before a stop failed');
      return new Map();
    }
  }

  const loop = async () => {
    inRound = true;
    try {
      await round();
    } catch (error) {
      logger.error({ err: error }, 'shard balancing round failed');
    }
    inRound = false;
    rounds += 1;
    const again = wokenInRound;
    wokenInRound = false;
    if (!stopped) timer = setTimeout(() => void (current = loop()), again ? 0 : deps.everyMs);
  };
  let current = loop();
  await current;
  // Started once the first share runs (the later ones start while the rounds go on).
  await resuming;

  return {
    get rounds() {
      return rounds;
    },
    wake() {
      if (stopped) return;
      if (inRound) {
        wokenInRound = true;
        return;
      }
      clearTimeout(timer);
      timer = setTimeout(() => void (current = loop()), 0);
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
