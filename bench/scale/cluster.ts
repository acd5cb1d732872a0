/**
 * The connector processes of bench:scale (connector/main.ts children, test/e2e/support/
 * child-connector.ts), each serving its Prometheus metrics on a free port. What a connector
 * holds is read from its /metrics (`wa_accounts_owned`, `wa_accounts_connected`,
 * `wa_shards_owned`), as an operator would read it.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnConnector, type ChildConnector } from '../../test/e2e/support/child-connector.js';
import { waitFor } from '../../test/support/wait.js';
import { sleep } from '../connector/measure.js';

export interface Holding {
  pid: number;
  owned: number;
  connected: number;
  shards: number;
}

/** What the live connectors hold at one moment. */
export interface Snapshot {
  at: number;
  holdings: Holding[];
}

const STARTED_TIMEOUT_MS = 300_000;
const SAMPLE_EVERY_MS = 250;

function gaugeOf(text: string, name: string): number {
  const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  if (value === undefined) throw new Error(`no ${name} in the metrics`);
  return Number(value);
}

export class Cluster {
  /** Every connector started, in start order (exited ones included). */
  readonly all: ChildConnector[] = [];
  private readonly metricsUrls = new Map<ChildConnector, string>();

  constructor(private readonly env: Record<string, string>) {
    // A bench that fails or is interrupted leaves no connector behind.
    process.once('exit', () => {
      for (const child of this.live()) child.process.kill('SIGKILL');
    });
  }

  live(): ChildConnector[] {
    return this.all.filter((child) => child.process.exitCode === null && child.process.signalCode === null);
  }

  /**
   * Starts a connector; resolves once it serves metrics and has logged `connector started` (both
   * after its first balancing round, which resumes the accounts of the shards it took).
   */
  async start(timeoutMs = STARTED_TIMEOUT_MS): Promise<ChildConnector> {
    const child = spawnConnector({ ...this.env, METRICS_PORT: '0', HOST: '127.0.0.1' });
    this.all.push(child);
    const served = await child.waitForLine('the metrics server', (l) => l.msg === 'metrics served', timeoutMs);
    this.metricsUrls.set(child, String(served.url));
    await child.waitForLine('the connector to start', (l) => l.msg === 'connector started', timeoutMs);
    return child;
  }

  async holding(child: ChildConnector): Promise<Holding> {
    const url = this.metricsUrls.get(child);
    if (!url) throw new Error(`connector ${child.pid} serves no metrics`);
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    const text = await response.text();
    return {
      pid: child.pid,
      owned: gaugeOf(text, 'wa_accounts_owned'),
      connected: gaugeOf(text, 'wa_accounts_connected'),
      shards: gaugeOf(text, 'wa_shards_owned'),
    };
  }

  async snapshot(): Promise<Snapshot> {
    const holdings = await Promise.all(this.live().map((child) => this.holding(child)));
    return { at: performance.now(), holdings };
  }

  /**
   * Waits until the live connectors hold all `accounts`, each of its own connected and each
   * connector at least one shard (not necessarily an account: few accounts may all hash to
   * others' shards), and that has not changed for `quietMs` (the balancer moves shards one round
   * at a time, so a pause shorter than a round is not the end). Resolves with the first snapshot
   * of that final state (its `at` is when the hand-over ended), or after `capMs` with the last
   * snapshot and `settled` false: the bench reports that instead of failing.
   */
  async waitSettled(accounts: number, quietMs: number, capMs: number): Promise<{ snapshot: Snapshot; settled: boolean }> {
    const deadline = performance.now() + capMs;
    let first: Snapshot | undefined;
    let firstKey = '';
    for (;;) {
      const current = await this.snapshot();
      const done =
        current.holdings.every((h) => h.owned === h.connected && h.shards > 0) &&
        current.holdings.reduce((sum, h) => sum + h.connected, 0) === accounts;
      const key = current.holdings.map((h) => `${h.pid}:${h.owned}:${h.shards}`).join(',');
      if (!done) first = undefined;
      else if (!first || key !== firstKey) {
        first = current;
        firstKey = key;
      }
      if (first && current.at - first.at >= quietMs) return { snapshot: first, settled: true };
      if (current.at > deadline) return { snapshot: current, settled: false };
      await sleep(SAMPLE_EVERY_MS);
    }
  }

  /** Lines with this message logged so far by every connector, exited ones included. */
  logged(msg: string): number {
    return this.all.reduce((sum, child) => sum + child.lines.filter((line) => line.msg === msg).length, 0);
  }

  /** Waits until the live connectors have all `accounts` connected (no quiet period); resolves with when. */
  async waitAllConnected(accounts: number, timeoutMs = 300_000): Promise<number> {
    const snapshot = await waitFor(
      `${accounts} accounts connected on the live connectors`,
      async () => {
        const current = await this.snapshot();
        return current.holdings.reduce((sum, h) => sum + h.connected, 0) === accounts ? current : undefined;
      },
      { timeoutMs, intervalMs: SAMPLE_EVERY_MS },
    );
    return snapshot.at;
  }

  /** Writes each connector's stdout (its JSON log) to a file of a new temporary directory; returns the directory. */
  async saveLogs(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'bench-scale-'));
    for (const [index, child] of this.all.entries()) {
      await writeFile(join(dir, `connector-${index + 1}-pid${child.pid}.log`), `${child.stdout.join('\n')}\n`);
    }
    return dir;
  }

  /** SIGKILLs every connector still running. */
  async killAll(): Promise<void> {
    for (const child of this.all) await child.kill();
  }
}

/** Accounts per connector: the spread figures the issue asks for. */
export function describeSpread(snapshot: Snapshot): string[] {
  const counts = snapshot.holdings.map((h) => h.owned);
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  const worst = Math.max(...counts.map((count) => Math.abs(count - mean) / mean)) * 100;
  return [
    ...snapshot.holdings.map((h) => `  connector pid ${h.pid}: ${h.owned} accounts (${h.connected} connected), ${h.shards} shards`),
    `  spread: max ${Math.max(...counts)}, min ${Math.min(...counts)}, mean ${mean.toFixed(1)}; worst deviation from the mean ${worst.toFixed(1)}% (target ±10%)`,
  ];
}
