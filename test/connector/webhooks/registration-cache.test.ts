import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Table } from '../../../core/store/table.js';
import { deleteWebhook, registerWebhook } from '../../../core/store/webhooks.js';
import { createRegistrationCache } from '../../../connector/webhooks/registrations.js';
import { useTestStack } from '../../support/test-stack.js';
import { simulatedDelay } from '../../support/wait.js';

/**
 * The delivery worker's list of registrations on DynamoDB (the emulator): cached reads for
 * events some webhook selects, a fresh read for an event none does, and a bound on those.
 */
const ctx = useTestStack();

/** The table, with the Queries sent through it counted (they still go to the emulator). */
function countingQueries(table: Table): { table: Table; queries: () => number } {
  let queries = 0;
  const doc = new Proxy(table.doc, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return (command: unknown, ...rest: unknown[]) => {
        if (command instanceof QueryCommand) queries += 1;
        return (target.send as (...args: unknown[]) => unknown)(command, ...rest);
      };
    },
  });
  return { table: { ...table, doc }, queries: () => queries };
}

describe('registration cache', () => {
  it('a registration stored after the cached read is found for an event queued after it; the cached list serves the rest', async () => {
    const { table, queries } = countingQueries(ctx.table);
    const url = 'http://127.0.0.1:9/registration-cache-1';
    const cache = createRegistrationCache(table, 600_000);
    expect((await cache.all()).some((r) => r.url === url)).toBe(false);

    await registerWebhook(ctx.table, url);
    const queuedAt = Date.now();
    // Still the cached list: it would serve this registration's events only once it expired.
    expect((await cache.all()).some((r) => r.url === url)).toBe(false);
    expect((await cache.asOf(queuedAt)).some((r) => r.url === url)).toBe(true);
    // That read refreshed the cache for everyone.
    expect((await cache.all()).some((r) => r.url === url)).toBe(true);
    // An event queued before the read needs no other.
    await cache.asOf(queuedAt);
    expect(queries()).toBe(2);
    await deleteWebhook(ctx.table, url);
  });

  it('events queued one after another share fresh reads: at most one starts every 250 ms', async () => {
    const { table, queries } = countingQueries(ctx.table);
    const cache = createRegistrationCache(table, 600_000);
    await cache.all();
    const started = Date.now();
    const asked: Promise<unknown>[] = [];
    // 40 events, each queued after the read before it started: each needs a fresh read.
    for (let i = 0; i < 40; i++) {
      asked.push(cache.asOf(Date.now()));
      // The events' pace is the scenario: one every 25 ms, ten per 250 ms.
      await simulatedDelay(25);
    }
    await Promise.all(asked);
    const elapsed = Date.now() - started;
    // One read at the start, then at most one per 250 ms begun.
    expect(queries() - 1).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 1);
    expect(queries() - 1).toBeGreaterThanOrEqual(2);
  });

  it("a producer's clock ahead of this one does not hold the event until it catches up", { timeout: 20_000 }, async () => {
    const url = 'http://127.0.0.1:9/registration-cache-3';
    const cache = createRegistrationCache(ctx.table, 600_000);
    await cache.all();
    await registerWebhook(ctx.table, url);
    // Queued "an hour from now" by this clock: held until then, the test would time out.
    expect((await cache.asOf(Date.now() + 3_600_000)).some((r) => r.url === url)).toBe(true);
    await deleteWebhook(ctx.table, url);
  });
});
