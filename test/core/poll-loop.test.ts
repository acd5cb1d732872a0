import { describe, expect, it } from 'vitest';
import { startPollLoop, type PollLoopOptions } from '../../core/poll-loop.js';
import type { Received } from '../../core/queues.js';
import { silentLogger } from '../support/test-stack.js';
import { waitFor } from '../support/wait.js';

type Receive = PollLoopOptions<string>['receive'];

/** A queue in memory: a receive with nothing visible stays out (a long poll) until messages come, or it is aborted. */
function memoryQueue() {
  const visible: Received<string>[] = [];
  const requests: Parameters<Receive>[0][] = [];
  let out: { take: () => void } | undefined;
  let sequence = 0;
  const receive: Receive = (request) => {
    requests.push(request);
    if (visible.length > 0) return Promise.resolve(visible.splice(0, request.maxMessages));
    return new Promise((resolve, reject) => {
      out = { take: () => resolve(visible.splice(0, request.maxMessages)) };
      request.abortSignal.addEventListener('abort', () => reject(new Error('aborted')));
    });
  };
  const send = (...bodies: string[]) => {
    for (const body of bodies) {
      sequence += 1;
      visible.push({ body, receiptHandle: `r${sequence}`, receiveCount: 1, sqsMessageId: `m${sequence}` });
    }
    out?.take();
    out = undefined;
  };
  return { receive, send, requests };
}

const basics = { waitSeconds: 20, visibilitySeconds: 10, backOffMs: 10, failed: () => 'back_off' as const };

describe('poll loop', () => {
  it('messages at once: a receive asks for no more than the free slots, and waits for one', async () => {
    const queue = memoryQueue();
    const finishers: (() => void)[] = [];
    const handled: string[] = [];
    const loop = startPollLoop({
      ...basics,
      receive: queue.receive,
      messagesAtOnce: 3,
      handleMessage: (message) => {
        handled.push(message.body);
        return new Promise<void>((resolve) => finishers.push(resolve));
      },
      receivedWhileStopping: async () => undefined,
    });
    queue.send('a', 'b', 'c', 'd');
    await waitFor('three messages handled', () => handled.length === 3);
    expect(queue.requests.map((r) => r.maxMessages)).toEqual([3]);
    expect(loop.unfinished().map((m) => m.body)).toEqual(['a', 'b', 'c']);
    finishers[0]?.();
    await waitFor('the fourth message', () => handled.length === 4);
    expect(queue.requests.map((r) => r.maxMessages)).toEqual([3, 1]);
    await loop.stop();
    for (const finish of finishers) finish();
    await loop.workDone();
    expect(loop.unfinished()).toEqual([]);
  });

  it('stop() wakes the receive out up; what it brings goes to receivedWhileStopping, not to the handler', async () => {
    const queue = memoryQueue();
    const handBack: string[] = [];
    const handled: string[] = [];
    const loop = startPollLoop({
      ...basics,
      receive: queue.receive,
      batchesAtOnce: 1,
      handleBatch: async (batch) => void handled.push(...batch.map((m) => m.body)),
      receivedWhileStopping: async (batch) => void handBack.push(...batch.map((m) => m.body)),
      wakeUp: { wakeReceivers: async () => queue.send('arrived with the wake-up'), graceMs: 60_000, logger: silentLogger },
    });
    await waitFor('the receive to be out', () => queue.requests.length === 1);
    expect(await loop.stop()).toBe('stopped');
    expect(handBack).toEqual(['arrived with the wake-up']);
    expect(handled).toEqual([]);
  });

  it('a receive still out after its wake-up grace is aborted', async () => {
    const queue = memoryQueue();
    const loop = startPollLoop({
      ...basics,
      receive: queue.receive,
      batchesAtOnce: 1,
      handleBatch: async () => undefined,
      receivedWhileStopping: async () => undefined,
      wakeUp: { wakeReceivers: async () => undefined, graceMs: 20, logger: silentLogger },
    });
    await waitFor('the receive to be out', () => queue.requests.length === 1);
    expect(await loop.stop()).toBe('stopped');
    expect(queue.requests[0]?.abortSignal.aborted).toBe(true);
  });

  it('after a failed receive or a rejected handler the loop backs off, or ends when `failed` says so', async () => {
    const queue = memoryQueue();
    const failures: string[] = [];
    let receives = 0;
    const loop = startPollLoop({
      ...basics,
      receive: (request) => {
        receives += 1;
        return receives === 1 ? Promise.reject(new Error('unreachable')) : queue.receive(request);
      },
      batchesAtOnce: 1,
      handleBatch: async () => {
        throw new Error('handler broke');
      },
      receivedWhileStopping: async () => undefined,
      failed: (error) => {
        failures.push((error as Error).message);
        return failures.length === 1 ? 'back_off' : 'end';
      },
    });
    await waitFor('the receive after the back-off', () => receives === 2);
    queue.send('x');
    expect(await loop.ended).toBe('failed');
    expect(failures).toEqual(['unreachable', 'handler broke']);
  });

  it('ends on its own once `pollWhile` turns false', async () => {
    const queue = memoryQueue();
    let batches = 0;
    queue.send('only');
    const loop = startPollLoop({
      ...basics,
      receive: queue.receive,
      batchesAtOnce: 1,
      handleBatch: async () => void (batches += 1),
      receivedWhileStopping: async () => undefined,
      pollWhile: () => batches === 0,
    });
    expect(await loop.ended).toBe('finished');
    expect(batches).toBe(1);
  });
});
