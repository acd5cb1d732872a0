import type { Logger } from './logger.js';
import type { Received } from './queues.js';
import { withTimeout } from './with-timeout.js';

/**
 * The receive loop of an SQS consumer (a shard's command consumer, the webhook delivery worker,
 * the drain of the single command queue from before shards): receive a batch, hand it on within
 * the loop's concurrency, pause after an error, stop without leaving a receive out. What a
 * message means, how it is disposed of (ack or release), and how long a stop lets work finish stay with each consumer.
 *
 *   const loop = startPollLoop({ receive, waitSeconds, visibilitySeconds, messagesAtOnce, handleMessage, ... });
 *   ...
 *   await loop.stop();                                   // no receive out any more; work goes on
 *   await withTimeout(loop.workDone(), consumersBound);  // the consumer's own bound
 *
 * It assumes nothing about the messages' age or schedule: a queue of delayed retries is polled
 * the same way as one of fresh events.
 */
export type PollLoopOptions<T> = PollLoopBasics<T> & PollLoopConcurrency<T>;

interface PollLoopBasics<T> {
  receive(request: ReceiveRequest): Promise<Received<T>[]>;
  /** Long-poll seconds of each receive. */
  waitSeconds: number;
  /** How long a message received stays hidden from other consumers, unless its work changes that. */
  visibilitySeconds: number;
  /**
   * What becomes of a batch whose receive was out when stop() was called: handed back to the
   * queue, usually. A failure goes to `failed`, and the loop ends all the same.
   */
  receivedWhileStopping(batch: Received<T>[]): Promise<void>;
  /**
   * Told of a receive that failed (or of work that rejected), logs it and answers what follows:
   * a pause of `backOffMs` before the next receive, or the end of the loop. Failures after
   * stop() (an aborted receive) are not told: the loop ends anyway.
   */
  failed(error: unknown): 'back_off' | 'end';
  backOffMs: number;
  /** Checked before every receive: once false, the loop ends ('finished'). */
  pollWhile?: () => boolean;
  /**
   * Ends a receive out at stop() by queueing a message that every receive deletes unseen (core/
   * queues.ts `wakeReceivers`), rather than waiting up to `waitSeconds` for it. Not aborting it
   * matters: SQS (and fauxqs) may still hand a message to an aborted request, hiding it for its
   * visibility. Only when the receive has not ended `graceMs` after its wake-up is it aborted.
   * Without a wake-up, stop() waits for the receive out: keep `waitSeconds` short then.
   */
  wakeUp?: { wakeReceivers(): Promise<void>; graceMs: number; logger: Logger };
}

/** How much work runs at once: whole batches, or single messages. Handlers should not reject (see `failed`). */
type PollLoopConcurrency<T> =
  | {
      /** Batches handled at once; the next receive waits for a free slot. */
      batchesAtOnce: number;
      handleBatch(batch: Received<T>[]): Promise<void>;
    }
  | {
      /** Messages (and tracked work) handled at once; a receive asks for no more than the free slots. */
      messagesAtOnce: number;
      handleMessage(message: Received<T>): Promise<void>;
    };

interface ReceiveRequest {
  maxMessages: number;
  waitSeconds: number;
  visibilityTimeoutSeconds: number;
  abortSignal: AbortSignal;
}

/** Why a loop ended: stop(), `pollWhile` turned false, or `failed` answered 'end'. */
type PollLoopEnd = 'stopped' | 'finished' | 'failed';

interface PollLoop<T> {
  readonly ended: Promise<PollLoopEnd>;
  /** No new receive; the receive out is woken up (or waited for). Resolves when the loop has ended; work in flight goes on. */
  stop(): Promise<PollLoopEnd>;
  /** Work besides the messages (a probe, a release) that takes a slot and counts for `workDone`. It should not reject. */
  track(work: Promise<void>): void;
  /** Resolves once the work in flight now has ended (not work started later). */
  workDone(): Promise<void>;
  /** The messages whose work has not ended. */
  unfinished(): Received<T>[];
}

/** SQS hands out at most 10 messages per receive. */
const MAX_RECEIVE_MESSAGES = 10;

export function startPollLoop<T>(options: PollLoopOptions<T>): PollLoop<T> {
  const slots = 'handleBatch' in options ? options.batchesAtOnce : options.messagesAtOnce;
  /** Work in flight, with the messages it works on. */
  const work = new Map<Promise<void>, readonly Received<T>[]>();
  let workFailure: { error: unknown } | undefined;
  let slotFreed: (() => void) | undefined;
  let stopped = false;
  let announceStop: () => void = () => undefined;
  const stopRequested = new Promise<void>((resolve) => (announceStop = resolve));
  /** Set while a receive is out: stop() wakes it up, or aborts it. */
  let receiveOut: AbortController | undefined;

  function track(promise: Promise<void>, messages: readonly Received<T>[] = []): void {
    const tracked = promise
      .catch((error: unknown) => {
        workFailure ??= { error };
      })
      .finally(() => {
        work.delete(tracked);
        slotFreed?.();
      });
    work.set(tracked, messages);
  }

  function handOn(batch: Received<T>[]): void {
    if ('handleBatch' in options) {
      if (batch.length > 0) track(options.handleBatch(batch), batch);
    } else {
      for (const message of batch) track(options.handleMessage(message), [message]);
    }
  }

  /** Ends early at stop(), so that a stop does not wait for a pause. */
  const backOff = () => withTimeout(stopRequested, options.backOffMs);

  async function run(): Promise<PollLoopEnd> {
    for (;;) {
      if (stopped) return 'stopped';
      if (work.size >= slots) {
        await Promise.race([new Promise<void>((resolve) => (slotFreed = resolve)), stopRequested]);
        continue;
      }
      if (workFailure) {
        const { error } = workFailure;
        workFailure = undefined;
        if (options.failed(error) === 'end') return 'failed';
        await backOff();
        continue;
      }
      if (options.pollWhile && !options.pollWhile()) return 'finished';
      receiveOut = new AbortController();
      let batch: Received<T>[];
      try {
        batch = await options.receive({
          maxMessages: 'handleBatch' in options ? MAX_RECEIVE_MESSAGES : Math.min(MAX_RECEIVE_MESSAGES, slots - work.size),
          waitSeconds: options.waitSeconds,
          visibilityTimeoutSeconds: options.visibilitySeconds,
          abortSignal: receiveOut.signal,
        });
      } catch (error) {
        if (stopped) return 'stopped';
        if (options.failed(error) === 'end') return 'failed';
        await backOff();
        continue;
      } finally {
        receiveOut = undefined;
      }
      if (stopped) {
        await options.receivedWhileStopping(batch).catch((error: unknown) => options.failed(error));
        return 'stopped';
      }
      handOn(batch);
    }
  }

  const ended = run();

  return {
    ended,
    async stop() {
      if (stopped) return ended;
      stopped = true;
      announceStop();
      const out = receiveOut;
      if (out && options.wakeUp) {
        const { wakeReceivers, graceMs, logger } = options.wakeUp;
        wakeReceivers().catch((error: unknown) => logger.warn({ err: error }, 'waking the receive up failed'));
        if ((await withTimeout(ended, graceMs)) === 'timed_out') {
          logger.warn('the receive did not end after its wake-up; aborted');
          out.abort();
        }
      }
      return ended;
    },
    track: (promise) => track(promise),
    workDone: () => Promise.all([...work.keys()]).then(() => undefined),
    unfinished: () => [...work.values()].flat(),
  };
}
