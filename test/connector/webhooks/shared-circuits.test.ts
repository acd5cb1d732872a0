import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClients, destroyClients } from '../../../core/aws.js';
import { listOpenCircuits } from '../../../core/store/webhook-circuits.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { Circuits } from '../../../connector/webhooks/circuit.js';
import { SharedCircuits } from '../../../connector/webhooks/shared-circuits.js';
import { countRequests } from '../../support/counted-table.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';

/**
 * The circuits two connectors share through DynamoDB (the emulator): each `SharedCircuits` here
 * is one connector's, with its own circuits in memory. Times are given, not waited for.
 */
let stack: TestStack;
let table: Table;
let seq = 0;
const settings = { failureThreshold: 3, probeBaseMs: 1_000, probeMaxMs: 4_000 };
const shared = { probeClaimMs: 15_000, syncOpenMs: 1_000, syncIdleMs: 4_000 };
const connector = (t: Table = table) => new SharedCircuits(new Circuits(settings), t, shared, silentLogger);
/** A receiver of its own per test: the circuits' partition is shared by the file. */
const newUrl = () => `https://receiver${(seq += 1)}.example/hook`;

async function open(c: SharedCircuits, url: string, now: number) {
  for (let i = 0; i < settings.failureThreshold - 1; i += 1) expect(await c.record(url, false, 'post', now)).toBeUndefined();
  expect(await c.record(url, false, 'post', now)).toBe('opened');
}

beforeAll(async () => {
  stack = await startTestStack();
  table = tableOf(stack.config, stack.clients);
});
afterAll(async () => {
  await stack?.stop();
});

describe('webhook circuits shared by connectors', () => {
  it('a circuit opened by one connector is open on a new one (after a crash) at its first sync: it parks, and probes on the shared schedule', async () => {
    const url = newUrl();
    const t = Date.now();
    await open(connector(), url, t);
    // The first connector is gone; a new one knows nothing until it reads the circuits.
    const next = connector();
    expect(await next.admit(url, t)).toBe('post');
    expect(await next.sync(t, true)).toContainEqual([url, 'opened']);
    expect(await next.admit(url, t + 500)).toBe('park');
    expect(await next.admit(url, t + settings.probeBaseMs)).toBe('probe');
  });

  it('of two connectors whose probe is due, one probes; a failed probe moves the schedule for both', async () => {
    const url = newUrl();
    const t = Date.now();
    const [a, b] = [connector(), connector()];
    await open(a, url, t);
    await b.sync(t, true);
    const due = t + settings.probeBaseMs;
    const admissions = await Promise.all([a.admit(url, due), b.admit(url, due)]);
    expect([...admissions].sort()).toEqual(['park', 'probe']);
    const prober = admissions[0] === 'probe' ? a : b;
    const other = prober === a ? b : a;
    expect(await prober.record(url, false, 'probe', due)).toBeUndefined();
    const [stored] = (await listOpenCircuits(table)).filter((c) => c.target === url);
    expect(stored).toMatchObject({ failedProbes: 1, nextProbeAt: due + 2 * settings.probeBaseMs });
    expect(stored?.probeUntil).toBeUndefined();
    await other.sync(due + shared.syncOpenMs, true);
    expect(await other.admit(url, due + settings.probeBaseMs)).toBe('park');
    expect(await other.admit(url, due + 2 * settings.probeBaseMs)).toBe('probe');
  });

  it('a probe answered 2xx closes the circuit for every connector: the others learn it at their next sync', async () => {
    const url = newUrl();
    const t = Date.now();
    const [a, b] = [connector(), connector()];
    await open(a, url, t);
    expect(await b.sync(t, true)).toContainEqual([url, 'opened']);
    expect(await a.admit(url, t + settings.probeBaseMs)).toBe('probe');
    expect(await a.record(url, true, 'probe', t + settings.probeBaseMs)).toBe('closed');
    expect((await listOpenCircuits(table)).map((c) => c.target)).not.toContain(url);
    expect(await b.sync(t + settings.probeBaseMs, true)).toContainEqual([url, 'closed']);
    expect(await b.admit(url)).toBe('post');
  });

  it('a second connector opening a circuit already open keeps the first one schedule', async () => {
    const url = newUrl();
    const t = Date.now();
    await open(connector(), url, t);
    const late = connector();
    await open(late, url, t + 700);
    // Due by the first opening (t + 1000), not by its own (t + 1700).
    expect(await late.admit(url, t + settings.probeBaseMs)).toBe('probe');
  });

  it('a closed circuit costs nothing: admitting and recording POSTs that answer sends no request; a sync is one Query', async () => {
    const clients = createClients(stack.config);
    try {
      const counts = countRequests(clients);
      const c = connector(tableOf(stack.config, clients));
      const url = newUrl();
      for (let i = 0; i < 20; i += 1) {
        expect(await c.admit(url)).toBe('post');
        await c.record(url, i % 2 === 0, 'post');
      }
      expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(0);
      await c.sync(Date.now(), true);
      expect(Object.fromEntries(counts)).toEqual({ QueryCommand: 1 });
    } finally {
      destroyClients(clients);
    }
  });
});
