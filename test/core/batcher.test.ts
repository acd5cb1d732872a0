import { describe, expect, it, vi } from 'vitest';
import { createBatcher } from '../../core/batcher.js';

describe('batcher', () => {
  it('groups items added together, answers each caller with its own outcome', async () => {
    const requests: number[][] = [];
    const batcher = createBatcher<number, number>({
      maxBatch: 3,
      lingerMs: 5,
      maxInFlight: 2,
      async send(items) {
        requests.push(items);
        return items.map((n) => (n === 4 ? new Error('four refused') : n * 10));
      },
    });
    const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => batcher.add(n)));
    expect(requests).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      10,
      20,
      30,
      'four refused',
      50,
    ]);
  });

  it('a failed request rejects every item in it; later items still go', async () => {
    let calls = 0;
    const batcher = createBatcher<string, string>({
      maxBatch: 10,
      lingerMs: 0,
      maxInFlight: 1,
      async send(items) {
        calls += 1;
        if (calls === 1) throw new Error('network down');
        return items;
      },
    });
    await expect(batcher.add('a')).rejects.toThrow('network down');
    await expect(batcher.add('b')).resolves.toBe('b');
  });

  it('with one request in flight, items queued meanwhile go together and in order', async () => {
    const requests: string[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = createBatcher<string, void>({
      maxBatch: 25,
      lingerMs: 0,
      maxInFlight: 1,
      async send(items) {
        requests.push(items);
        if (requests.length === 1) await gate;
        return items.map(() => undefined);
      },
    });
    const first = batcher.add('a');
    const rest = ['b', 'c', 'd'].map((x) => batcher.add(x));
    expect(requests).toEqual([['a']]);
    release();
    await Promise.all([first, ...rest]);
    expect(requests).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('flush sends what lingers and waits for it', async () => {
    const sent: number[] = [];
    const batcher = createBatcher<number, void>({
      maxBatch: 10,
      lingerMs: 60_000,
      maxInFlight: 1,
      async send(items) {
        sent.push(...items);
        return items.map(() => undefined);
      },
    });
    const added = batcher.add(1);
    await batcher.flush();
    expect(sent).toEqual([1]);
    await added;
  });

  /** A batcher whose requests are recorded, each item answered at once. */
  function recording(lingerMs: number, maxInFlight: number) {
    const requests: string[][] = [];
    const batcher = createBatcher<string, void>({
      maxBatch: 25,
      lingerMs,
      maxInFlight,
      async send(items) {
        requests.push(items);
        return items.map(() => undefined);
      },
    });
    return { batcher, requests };
  }

  it('an item in no hurry rides along with the next pressing one, or leaves on its own once its linger is up', async () => {
    const { batcher, requests } = recording(0, 4);
    const lazy = batcher.add('delete a', 60_000);
    expect(requests).toEqual([]);
    await batcher.add('put b');
    await lazy;
    expect(requests).toEqual([['delete a', 'put b']]);

    const started = Date.now();
    await batcher.add('delete c', 30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(requests).toEqual([['delete a', 'put b'], ['delete c']]);
  });

  it('a shorter linger moves the pending departure earlier', async () => {
    const { batcher, requests } = recording(60_000, 1);
    const slow = batcher.add('slow');
    await batcher.add('soon', 5);
    await slow;
    expect(requests).toEqual([['slow', 'soon']]);
  });

  /** A batcher whose requests wait for `release(n)` (n counted from 0), recorded as they leave. */
  function gated(options: { maxInFlight: number; holdBesideMs: number; orderKeyOf?: (item: string) => string }) {
    const requests: string[][] = [];
    const releases: Array<() => void> = [];
    const gates: Promise<void>[] = [];
    const batcher = createBatcher<string, void>({
      maxBatch: 3,
      lingerMs: 0,
      ...options,
      async send(items) {
        const n = requests.push(items) - 1;
        gates[n] ??= new Promise<void>((resolve) => (releases[n] = resolve));
        await gates[n];
        return items.map(() => undefined);
      },
    });
    const release = (n: number) => {
      gates[n] ??= Promise.resolve();
      releases[n]?.();
    };
    return { batcher, requests, release };
  }

  it('while a request is out, a batch short of full waits for it, and goes beside it only after holdBesideMs', async () => {
    const { batcher, requests, release } = gated({ maxInFlight: 4, holdBesideMs: 60_000 });
    const first = batcher.add('a');
    const queued = ['b', 'c'].map((x) => batcher.add(x));
    // Slots are free, but b and c wait for company rather than leave one by one.
    expect(requests).toEqual([['a']]);
    release(1);
    release(0);
    await Promise.all([first, ...queued]);
    expect(requests).toEqual([['a'], ['b', 'c']]);

    const beside = gated({ maxInFlight: 4, holdBesideMs: 20 });
    const slow = beside.batcher.add('slow');
    const started = Date.now();
    const quick = beside.batcher.add('quick');
    beside.release(1);
    await quick;
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    expect(beside.requests).toEqual([['slow'], ['quick']]);
    beside.release(0);
    await slow;
  });

  it('a full batch leaves beside the requests out at once', async () => {
    const { batcher, requests, release } = gated({ maxInFlight: 4, holdBesideMs: 60_000 });
    const all = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((x) => batcher.add(x));
    expect(requests).toEqual([['a'], ['b', 'c', 'd'], ['e', 'f', 'g']]);
    for (let n = 0; n < 4; n++) release(n);
    await Promise.all(all);
    expect(requests).toEqual([['a'], ['b', 'c', 'd'], ['e', 'f', 'g'], ['h']]);
  });

  it('items of one order key are never out twice at once: they wait for it, in order, while other keys go beside', async () => {
    const { batcher, requests, release } = gated({ maxInFlight: 4, holdBesideMs: 0, orderKeyOf: (item) => item.split(':')[0]! });
    // The batcher's timers faked, to run whatever it set one for: what did not leave then waits.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const first = batcher.add('x:1');
    const later = ['x:2', 'y:1', 'x:3'].map((item) => batcher.add(item));
    vi.runAllTimers();
    vi.useRealTimers();
    // y went beside x:1; x:2 and x:3 wait for x:1.
    expect(requests).toEqual([['x:1'], ['y:1']]);
    release(1);
    release(0);
    release(2);
    await Promise.all([first, ...later]);
    expect(requests).toEqual([['x:1'], ['y:1'], ['x:2', 'x:3']]);
  });
});
