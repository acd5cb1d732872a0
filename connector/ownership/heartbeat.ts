import { randomBytes } from 'node:crypto';
import type { Logger } from '../../core/logger.js';
import { beat, markLeaving, registerHeartbeat, removeHeartbeat, type StoredFormat } from '../../core/store/heartbeats.js';
import type { Table } from '../../core/store/table.js';

export interface HeartbeatDeps {
  /** On clients of its own (core/aws.ts createDynamoClients): a beat must not queue behind the hot path's requests. */
  table: Table;
  connectorId: string;
  /** How long a beat keeps the heartbeat live: the takeover time after the connector dies. */
  ttlMs: number;
  everyMs: number;
  logger: Logger;
  /** The stored formats announced as read (core/store/heartbeats.ts); all of them unless given. */
  reads?: readonly StoredFormat[];
}

/**
 * A connector's heartbeat (core/store/heartbeats.ts): the one record whose beats keep all its
 * account and shard leases. Beats every `everyMs` in a loop of its own, so that nothing else the
 * connector does (a round of the shard balancer, a resume of many accounts) can delay them.
 *
 * An epoch ends when the heartbeat is found declared dead, or when a beat has not landed before
 * the last one runs out (minus a margin for clocks): `onLost` fires, and the next beat registers
 * a new epoch. Between the two, `epoch` is undefined and no lease can be taken.
 */
export class ConnectorHeartbeat {
  private current: string | undefined;
  /** When the last beat runs out, on this process's clock (taken before the request left). */
  private liveUntil = 0;
  private loopTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly lostListeners: ((why: string) => void)[] = [];

  private constructor(private readonly deps: HeartbeatDeps) {}

  /** Registers the first epoch (a failure is logged, and retried at the next beat), then beats on. */
  static async start(deps: HeartbeatDeps): Promise<ConnectorHeartbeat> {
    const heartbeat = new ConnectorHeartbeat(deps);
    await heartbeat.tick();
    return heartbeat;
  }

  /**
   * `listener` runs when the heartbeat may be dead to the others (declared dead, or not extended
   * in time): every lease it held may be taken from then on, so what they guard must stop now
   * (sockets closed, command queues no longer polled), nothing released.
   */
  onLost(listener: (why: string) => void): void {
    this.lostListeners.push(listener);
  }

  /** The epoch the leases are written with; undefined while none is live. */
  get epoch(): string | undefined {
    return this.current;
  }

  /** A stop has begun: the others plan without this connector, its leases still held. */
  async markLeaving(): Promise<void> {
    const epoch = this.current;
    if (epoch) await markLeaving(this.deps.table, this.deps.connectorId, epoch);
  }

  /** Stops beating and removes the heartbeat: call once every account lease is released. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.loopTimer);
    clearTimeout(this.deadlineTimer);
    await this.inFlight;
    const epoch = this.current;
    this.current = undefined;
    if (epoch) await removeHeartbeat(this.deps.table, this.deps.connectorId, epoch);
  }

  private tick(): Promise<void> {
    this.inFlight = this.beatOnce()
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'heartbeat write failed'))
      .finally(() => {
        if (!this.stopped) this.loopTimer = setTimeout(() => void this.tick(), this.deps.everyMs);
      });
    return this.inFlight;
  }

  private async beatOnce(): Promise<void> {
    const { table, connectorId, ttlMs, everyMs } = this.deps;
    const now = Date.now();
    const epoch = this.current;
    // A write still out after half the TTL is given up and tried again: a hung request must not
    // hold the loop while the heartbeat runs out.
    const signal = AbortSignal.timeout(ttlMs / 2);
    try {
      if (epoch === undefined) {
        const fresh = randomBytes(8).toString('hex');
        await registerHeartbeat(table, connectorId, fresh, ttlMs, now, signal, this.deps.reads);
        if (this.stopped) return;
        this.current = fresh;
        this.extended(now + ttlMs);
        return;
      }
      if (await beat(table, connectorId, epoch, ttlMs, now, signal)) {
        if (this.current === epoch) this.extended(now + ttlMs);
        return;
      }
      if (this.current === epoch) this.lose('declared dead by another connector');
    } finally {
      const tookMs = Date.now() - now;
      if (tookMs > everyMs / 2) this.deps.logger.warn({ tookMs }, 'heartbeat write slow');
    }
  }

  private extended(until: number): void {
    this.liveUntil = until;
    clearTimeout(this.deadlineTimer);
    const margin = Math.min(1_000, this.deps.ttlMs / 10);
    this.deadlineTimer = setTimeout(() => this.lose('not extended in time'), Math.max(0, until - margin - Date.now()));
  }

  private lose(why: string): void {
    if (this.current === undefined || this.stopped) return;
    this.current = undefined;
    clearTimeout(this.deadlineTimer);
    this.deps.logger.warn({ why, liveUntil: this.liveUntil }, 'heartbeat lost: closing every socket here, then registering again');
    for (const listener of this.lostListeners) listener(why);
  }
}
