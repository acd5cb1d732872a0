import { describe, expect, it } from 'vitest';
import { KeyedSerial, SerialQueue } from '../../core/serial.js';

/** A promise settled from outside, so a test decides when work finishes. */
function gate() {
  let open!: () => void;
  let fail!: (error: unknown) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

describe('serial executor', () => {
  describe('SerialQueue', () => {
    it('runs work one at a time in call order and passes each result to its caller', async () => {
      const queue = new SerialQueue();
      const first = gate();
      const events: string[] = [];
      const a = queue.run(async () => {
        events.push('a start');
        await first.promise;
        events.push('a end');
        return 'a';
      });
      const b = queue.run(() => {
        events.push('b');
        return 42;
      });
      await expect.poll(() => events).toEqual(['a start']);
      first.open();
      expect(await a).toBe('a');
      expect(await b).toBe(42);
      expect(events).toEqual(['a start', 'a end', 'b']);
    });

    it('a failure reaches only its caller; the work after it still runs', async () => {
      const queue = new SerialQueue();
      const failing = queue.run(async () => {
        throw new Error('boom');
      });
      const after = queue.run(async () => 'still runs');
      await expect(failing).rejects.toThrow('boom');
      await expect(after).resolves.toBe('still runs');
      await expect(queue.drained()).resolves.toBeUndefined();
    });

    it('drained() waits for the work queued so far and resolves even when it failed', async () => {
      const queue = new SerialQueue();
      const slow = gate();
      let done = false;
      queue.run(() => slow.promise).catch(() => undefined);
      const drained = queue.drained().then(() => {
        done = true;
      });
      await Promise.resolve();
      expect(done).toBe(false);
      slow.fail(new Error('write failed'));
      await drained;
      expect(done).toBe(true);
    });
  });

  describe('KeyedSerial', () => {
    it('serializes per key and runs different keys in parallel', async () => {
      const serial = new KeyedSerial();
      const blockA = gate();
      const events: string[] = [];
      const a1 = serial.run('a', async () => {
        await blockA.promise;
        events.push('a1');
      });
      const a2 = serial.run('a', () => {
        events.push('a2');
      });
      // 'b' finishes while 'a' is still blocked.
      await serial.run('b', () => {
        events.push('b1');
      });
      expect(events).toEqual(['b1']);
      blockA.open();
      await Promise.all([a1, a2]);
      expect(events).toEqual(['b1', 'a1', 'a2']);
    });

    it("an error on a key doesn't break that key's chain", async () => {
      const serial = new KeyedSerial();
      const failing = serial.run('k', () => Promise.reject(new Error('nope')));
      const next = serial.run('k', () => 'ok');
      await expect(failing).rejects.toThrow('nope');
      await expect(next).resolves.toBe('ok');
    });

    it('forgets idle keys: after many keys were used and settled, it holds none', async () => {
      const serial = new KeyedSerial();
      const runs: Promise<unknown>[] = [];
      for (let i = 0; i < 500; i += 1) {
        runs.push(serial.run(`key-${i}`, async () => i));
        runs.push(serial.run(`key-${i}`, () => Promise.reject(new Error(`fail ${i}`))).catch(() => undefined));
      }
      expect(serial.size).toBe(500);
      await Promise.all(runs);
      await expect.poll(() => serial.size).toBe(0);
    });

    it('a key busy again after going idle still runs in order', async () => {
      const serial = new KeyedSerial();
      await serial.run('k', () => undefined);
      await expect.poll(() => serial.size).toBe(0);
      const order: number[] = [];
      const hold = gate();
      const one = serial.run('k', async () => {
        await hold.promise;
        order.push(1);
      });
      const two = serial.run('k', () => {
        order.push(2);
      });
      expect(serial.size).toBe(1);
      hold.open();
      await Promise.all([one, two]);
      expect(order).toEqual([1, 2]);
    });
  });
});
