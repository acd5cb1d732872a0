import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../test/support/wait.js';

/** Measuring helpers shared by the benchmarks (bench:connector's steps, bench:scale). */
export const MB = 1024 * 1024;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident set size of a process, in bytes. */
export function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Runs `work` over `items`, at most `size` at a time. */
export async function inBatches<T>(items: T[], size: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** The p-th percentile (0-100) of ascending `sorted` values (nearest rank below); NaN when empty. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** The connector's `wa_memory_bytes` gauge (process.memoryUsage) by kind, and its idle collections (count, seconds in all). */
export async function memoryByKind(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const idle = (suffix: string) => Number(new RegExp(`^wa_idle_collection_seconds_${suffix} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    ...Object.fromEntries([...text.matchAll(/^wa_memory_bytes\{kind="(\w+)"\} (\d+)$/gm)].map(([, kind, bytes]) => [kind, Number(bytes)])),
    event_loop_busy_share: Number(/^wa_event_loop_busy_share (\S+)$/m.exec(text)?.[1] ?? 0),
    idle_collections: idle('count'),
    idle_collection_seconds: idle('sum'),
    heartbeat_losses: Number(/^wa_heartbeat_losses_total (\S+)$/m.exec(text)?.[1] ?? 0),
  };
}

/** Signals the connector to write a heap snapshot (it runs with --heapsnapshot-signal) and answers its path once written. */
export async function heapSnapshot(pid: number, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  const file = await waitFor(
    'the heap snapshot',
    () => readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name)),
    {
      timeoutMs: 600_000,
      intervalMs: 500,
    },
  );
  // Written in chunks: done when its size holds still for a few seconds.
  let size = -1;
  await waitFor(
    'the heap snapshot to be complete',
    () => {
      const now = statSync(join(dir, file)).size;
      const still = now === size && now > 0;
      size = now;
      return still;
    },
    { timeoutMs: 600_000, intervalMs: 3_000 },
  );
  return join(dir, file);
}

/**
 * A process's RSS by kind of mapping, from /proc/<pid>/smaps, in bytes: `brk` (glibc's main
 * malloc heap), `anonymous` (V8's heap pages, WebAssembly memory, malloc's other arenas and its
 * large blocks), `files` (the node binary, shared libraries, mapped files), `stacks`.
 */
export function rssByMapping(pid: number): { brk: number; anonymous: number; files: number; stacks: number } {
  const totals = { brk: 0, anonymous: 0, files: 0, stacks: 0 };
  let kind: keyof typeof totals = 'anonymous';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      const name = header[1]!;
      kind = name === '[heap]' ? 'brk' : name.startsWith('[stack') ? 'stacks' : name.startsWith('/') ? 'files' : 'anonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)?.[1];
    if (rss) totals[kind] += Number(rss) * 1024;
  }
  return totals;
}

/**
 * The connector left idle for `minutes`: RSS, V8 heap in use and idle collections every 30 s
 * (one reading says little while V8 and the idle collector take turns), then the lowest, the
 * median and the highest RSS per account above `baselineRss`.
 */
export async function watchIdle(pid: number, metricsUrl: string, accounts: number, baselineRss: number, minutes: number): Promise<string> {
  const started = performance.now();
  const samples: number[] = [];
  while (performance.now() - started < minutes * 60_000) {
    await sleep(30_000);
    const rss = rssOf(pid);
    const memory = await memoryByKind(metricsUrl);
    samples.push(rss);
    console.log(
      `  idle minute ${((performance.now() - started) / 60_000).toFixed(1)}: RSS ${(rss / MB).toFixed(1)} MB, heap in use ` +
        `${((memory.heap_used ?? 0) / MB).toFixed(1)} MB, event loop busy ${((memory.event_loop_busy_share ?? 0) * 100).toFixed(1)}%, ` +
        `idle collections ${memory.idle_collections ?? 0}`,
    );
  }
  const sorted = samples.sort((a, b) => a - b);
  const perAccount = (rss: number) => ((rss - baselineRss) / accounts / MB).toFixed(2);
  return (
    `${accounts} accounts idle ${minutes} min, RSS per account every 30 s: lowest ${perAccount(sorted[0] ?? 0)}, ` +
    `median ${perAccount(percentile(sorted, 50))}, highest ${perAccount(sorted.at(-1) ?? 0)} MB`
  );
}
