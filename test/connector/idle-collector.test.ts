import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startIdleCollector } from '../../connector/idle-collector.js';
import { CONNECTOR_NODE_FLAGS } from '../../connector/node-flags.js';
import { silentLogger } from '../support/test-stack.js';
import { waitFor } from '../support/wait.js';

const MB = 1024 * 1024;
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The idle collector (connector/idle-collector.ts): its policy with the heap and the event loop
 * given by the test, then the real thing in a process started with the connector's Node flags.
 */
describe('idle collector', () => {
  function policy(heap: { used: number }, busy: { share: number }, minSpacingMs = 0, traffic?: { count: number }) {
    const collected: number[] = [];
    // Each check starts by asking for the busy share: counting those counts the checks.
    let checks = 0;
    const collector = startIdleCollector({
      everyMs: 10,
      minSpacingMs,
      logger: silentLogger,
      heapUsed: () => heap.used,
      busyShare: () => {
        checks += 1;
        return busy.share;
      },
      ...(traffic ? { traffic: () => traffic.count } : {}),
      async collect() {
        collected.push(heap.used);
        heap.used = 100 * MB;
      },
    });
    /**
     * Resolves once `n` more checks have run. Something that did not happen over them would
     * have happened at one of them: what a policy test waits for before asserting that nothing
     * was collected (the checks read the heap and the busy share the test has just set).
     */
    const checked = (n: number) => {
      const from = checks;
      return waitFor(`${n} more checks`, () => checks >= from + n, { intervalMs: 5 });
    };
    return { collector, collected, checked };
  }

  it('collects at the first quiet check, then when the heap grew past 1.5x what that left plus 32 MB, and not again until it grows again', async () => {
    const heap = { used: 300 * MB };
    const { collector, collected, checked } = policy(heap, { share: 0.05 });
    await waitFor('the first collection', () => collected.length === 1);
    expect(heap.used).toBe(100 * MB);
    heap.used = 180 * MB; // 1.5 x 100 + 32 = 182: not yet
    await checked(3);
    expect(collected).toEqual([300 * MB]);
    heap.used = 190 * MB;
    await waitFor('a second collection', () => collected.length === 2);
    await checked(3);
    expect(collected).toEqual([300 * MB, 190 * MB]);
    expect(collector.collections).toBe(2);
    await collector.stop();
  });

  it('leaves a busy process to V8: nothing collected while the event loop is busy 10% of the time or more', async () => {
    const heap = { used: 500 * MB };
    const busy = { share: 0.1 };
    const { collector, collected, checked } = policy(heap, busy);
    await checked(3);
    expect(collected).toEqual([]);
    busy.share = 0.05;
    await waitFor('a collection once quiet', () => collected.length === 1);
    await collector.stop();
  });

  it('with the traffic counted: a loop kept busy by background work alone is quiet, one serving messages or busier than 50% is not', async () => {
    // Every 10 ms, at most 0.1 message per second counts as no traffic: none may come in.
    const heap = { used: 500 * MB };
    const busy = { share: 0.3 };
    const traffic = { count: 0 };
    const feeder = setInterval(() => {
      traffic.count += 1;
    }, 2);
    const { collector, collected, checked } = policy(heap, busy, 0, traffic);
    await checked(4);
    expect(collected).toEqual([]);
    busy.share = 0.6;
    clearInterval(feeder);
    await checked(3);
    expect(collected).toEqual([]);
    expect(collector.busyShare).toBe(0.6);
    busy.share = 0.3;
    await waitFor('a collection once the traffic stopped', () => collected.length === 1);
    expect(collector.busyShare).toBe(0.3);
    await collector.stop();
  });

  it('collects at most once per spacing, however much garbage comes back', async () => {
    const heap = { used: 300 * MB };
    const { collector, collected, checked } = policy(heap, { share: 0 }, 60_000);
    await waitFor('the first collection', () => collected.length === 1);
    heap.used = 900 * MB;
    await checked(5);
    expect(collected).toEqual([300 * MB]);
    await collector.stop();
  });

  it("in a process with the connector's flags: V8's garbage is collected once the loop is quiet", async () => {
    // 200 MB of garbage, then idle: the collector (every 200 ms) gives it back.
    const script = `
      import { exposedFullCollection, startIdleCollector } from './connector/idle-collector.ts';
      import { pino } from 'pino';
      import { waitFor } from './test/support/wait.ts';
      const collector = startIdleCollector({ everyMs: 200, logger: pino({ level: 'silent' }), collect: exposedFullCollection() });
      let keep = [];
      for (let i = 0; i < 200; i++) keep.push(new Array(128 * 1024).fill(i));
      keep = undefined;
      const before = process.memoryUsage().heapUsed;
      await waitFor('a collection', () => collector.collections > 0);
      await collector.stop();
      console.log(JSON.stringify({ before, after: process.memoryUsage().heapUsed }));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...CONNECTOR_NODE_FLAGS, '--import', 'tsx', '--input-type=module', '--eval', script],
      { cwd: repoRoot, timeout: 60_000 },
    );
    const { before, after } = JSON.parse(stdout) as { before: number; after: number };
    expect(before).toBeGreaterThan(150 * MB);
    expect(after).toBeLessThan(before / 3);
  });
});
