import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Logger } from '../core/logger.js';

/**
 * Gives the V8 heap's garbage back while the connector is quiet (docs/benchmarks/history.md, "Where RSS
 * per account goes"). V8 lets the old generation grow to several times its live data before it
 * collects, and hundreds of sockets that each allocate a little all the time keep its memory
 * reducer from starting: 60 s after their traffic, 100 accounts held 333 MB of heap in use of
 * which 140 MB was live, and an RSS of 4 MB per account. Every `everyMs`, when the connector was
 * quiet over that span and the heap in use has grown well past what the last collection left,
 * one full collection runs, at most one per MIN_SPACING_MS (a pause of about half a second at
 * 100 accounts and 4 s at 1,000, taken only when there is little to delay): the same 100
 * accounts then held 1.7 MB per account. Under load nothing changes: V8's own policy applies.
 *
 * Quiet means the event loop was busy less than IDLE_SHARE of the time, or, with `traffic` given,
 * that almost no message came in and almost no command was handled while it was busy less than
 * BACKGROUND_SHARE: a thousand idle accounts keep a connector busier than IDLE_SHARE with no
 * traffic at all (lease renewals, keepalives, ownership scans), and the collector never ran there.
 */
export interface IdleCollectorDeps {
  everyMs: number;
  logger: Logger;
  /** A full collection: V8's `gc` as `--expose-gc` gives it (connector/node-flags.ts). */
  collect: () => Promise<void>;
  /** Bytes of heap in use now. */
  heapUsed?: () => number;
  /** Share of the time since the previous call the event loop was busy (0..1). */
  busyShare?: () => number;
  /** Messages received and commands handled so far (a count that only grows). */
  traffic?: () => number;
  /** At least this long between two collections (default MIN_SPACING_MS). */
  minSpacingMs?: number;
  /** After each collection: how long it took (the event loop's pause) and the heap in use before and after. */
  onCollected?: (collection: { seconds: number; before: number; after: number }) => void;
}

export interface IdleCollector {
  /** Collections run so far. */
  readonly collections: number;
  /** The event loop's busy share over the last check's span (0..1; 0 before the first check). */
  readonly busyShare: number;
  stop(): Promise<void>;
}

/** Busy less than this, the process is quiet whatever it does. */
const IDLE_SHARE = 0.1;
/**
 * Busy less than this with (almost) no traffic, the process is quiet too: what keeps it busy is
 * the background work of its accounts. Busier, something else runs (accounts resuming, a backlog
 * drained) and V8's own schedule is left alone.
 */
const BACKGROUND_SHARE = 0.5;
/** At most this many messages and commands per second still count as no traffic (a pause delays a few at most). */
const QUIET_TRAFFIC_PER_SECOND = 0.1;
/**
 * A collection pauses the event loop for about half a second at 100 accounts (more with a
 * larger heap): under light traffic, at most one per this span.
 */
const MIN_SPACING_MS = 5 * 60_000;
/** Collected once the heap in use passes what the last collection left by this factor and this margin. */
const GROWTH_FACTOR = 1.5;
const GROWTH_MARGIN_BYTES = 32 * 1024 * 1024;

export function startIdleCollector(deps: IdleCollectorDeps): IdleCollector {
  const heapUsed = deps.heapUsed ?? (() => process.memoryUsage().heapUsed);
  const busyShare = deps.busyShare ?? eventLoopBusyShare();
  // What a collection left; none yet, so the first quiet check collects and sets it (the heap in
  // use at start is mostly the garbage of resuming the accounts).
  let afterLast = 0;
  const minSpacingMs = deps.minSpacingMs ?? MIN_SPACING_MS;
  let collections = 0;
  let lastAt = Number.NEGATIVE_INFINITY;
  let running: Promise<void> = Promise.resolve();
  let lastBusy = 0;
  let trafficBefore = deps.traffic?.() ?? 0;
  const quiet = (busy: number) => {
    if (!deps.traffic) return busy < IDLE_SHARE;
    const traffic = deps.traffic();
    const inSpan = traffic - trafficBefore;
    trafficBefore = traffic;
    return busy < IDLE_SHARE || (busy < BACKGROUND_SHARE && inSpan <= (QUIET_TRAFFIC_PER_SECOND * deps.everyMs) / 1000);
  };
  const tick = async () => {
    const busy = busyShare();
    lastBusy = busy;
    const before = heapUsed();
    if (!quiet(busy) || before < afterLast * GROWTH_FACTOR + GROWTH_MARGIN_BYTES) return;
    if (performance.now() - lastAt < minSpacingMs) return;
    const started = performance.now();
    lastAt = started;
    try {
      await deps.collect();
    } catch (error) {
      deps.logger.warn({ err: error }, 'idle heap collection failed');
      return;
    }
    const seconds = (performance.now() - started) / 1000;
    afterLast = heapUsed();
    collections += 1;
    deps.onCollected?.({ seconds, before, after: afterLast });
    deps.logger.info(
      { beforeMb: Math.round(before / 2 ** 20), afterMb: Math.round(afterLast / 2 ** 20), ms: Math.round(seconds * 1000) },
      'heap collected while idle',
    );
  };
  const timer = setInterval(() => {
    running = running.then(tick);
  }, deps.everyMs);
  timer.unref();
  return {
    get collections() {
      return collections;
    },
    get busyShare() {
      return lastBusy;
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** The event loop's busy share between one call and the next (its utilization over that span). */
function eventLoopBusyShare(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const span = performance.eventLoopUtilization(now, last);
    last = now;
    return span.utilization;
  };
}

/**
 * V8's full collection when the process runs with `--expose-gc`, else undefined. The
 * `last-resort` flavour (what V8 runs on a low-memory notification: collections until nothing
 * more is freed, compacting, then the empty pages and new space given back) and not a plain
 * major one: after a plain one V8 keeps the pages it committed, so the RSS stays where it was
 * (300 MB of garbage: heap reserved 478 -> 407 MB after a plain collection, -> 132 MB after this
 * one, RSS 542 -> 474 -> 197 MB).
 */
export function exposedFullCollection(): (() => Promise<void>) | undefined {
  const gc = globalThis.gc;
  if (!gc) return undefined;
  return () => gc({ type: 'major', flavor: 'last-resort', execution: 'async' });
}
