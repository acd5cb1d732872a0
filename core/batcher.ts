/**
 * Group commit for AWS calls that have a batch form (SQS SendMessageBatch and
 * DeleteMessageBatch, DynamoDB BatchWriteItem): each caller adds one item and awaits its own
 * outcome, exactly as with the single call; items added close together travel in one request.
 *
 *   const sends = createBatcher({ maxBatch: 10, lingerMs: 5, maxInFlight: 4, send });
 *   await sends.add(item);   // resolves when the request carrying `item` succeeded for it
 *
 * A batch leaves when it is full, or when an item has waited its linger and no request is out.
 * While requests are out, a batch short of full waits for one of them to come back (the items
 * that queue meanwhile go together: the busier, the bigger the batches), but no longer than
 * `holdBesideMs`: then it leaves beside them, so a slow request (a thousand pre-keys) never
 * holds the others up. Every extra request costs the AWS SDK's per-call work, about as much CPU
 * as the rest of a message's handling (docs/benchmarks.md), so at a few hundred items per second
 * sending each one as soon as a slot was free made most requests carry one item. An item may
 * bring its own linger: one that is in no hurry (a deletion) waits long, and rides along
 * whenever a more pressing one leaves.
 */
export interface BatcherOptions<T, R> {
  maxBatch: number;
  /** How long a lone item waits for company; 0 sends at once when no request is out. */
  lingerMs: number;
  /** Requests out at once. 1 also keeps batches in order (a later write never lands first). */
  maxInFlight: number;
  /** How long a batch short of full waits for a request out before leaving beside it (default 5 ms). */
  holdBesideMs?: number;
  /**
   * Items with the same order key never travel in two requests out at once: an item whose key
   * is out waits for that request, so items of one key land in the order they were added, while
   * other keys' items still go beside it.
   */
  orderKeyOf?: (item: T) => string;
  /** Sends one batch; the outcome of each item, in order: its result, or an Error for it alone. */
  send(items: T[]): Promise<Array<R | Error>>;
}

export interface Batcher<T, R> {
  /** `lingerMs`: this item's own wait for company (the batcher's by default). */
  add(item: T, lingerMs?: number): Promise<R>;
  /** Sends everything queued now and resolves when no request is out (shutdown). */
  flush(): Promise<void>;
}

interface Waiting<T, R> {
  item: T;
  /** When its linger is up (epoch ms). */
  due: number;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/** About one round trip to DynamoDB or SQS in the same region (and to the local emulators). */
const HOLD_BESIDE_MS = 5;

export function createBatcher<T, R>(options: BatcherOptions<T, R>): Batcher<T, R> {
  const holdBesideMs = options.holdBesideMs ?? HOLD_BESIDE_MS;
  const { orderKeyOf } = options;
  const queued: Waiting<T, R>[] = [];
  const inFlight = new Set<Promise<void>>();
  /** Order keys of the items in requests out. */
  const keysOut = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms): an item due sooner moves it earlier. */
  let timerDue = 0;

  /** Indices of the next batch: the first items in order, less those whose key is out. */
  function pick(): number[] {
    const picked: number[] = [];
    for (let i = 0; i < queued.length && picked.length < options.maxBatch; i++) {
      if (orderKeyOf && keysOut.has(orderKeyOf(queued[i]!.item))) continue;
      picked.push(i);
    }
    return picked;
  }

  /** When a batch short of full may leave: its first due item's time, later while requests are out. */
  function leavesAt(picked: number[]): number {
    let due = Number.POSITIVE_INFINITY;
    for (const i of picked) due = Math.min(due, queued[i]!.due);
    return inFlight.size > 0 ? due + holdBesideMs : due;
  }

  function dispatch(force = false): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (queued.length > 0 && inFlight.size < options.maxInFlight) {
      const picked = pick();
      if (picked.length === 0) return;
      if (!force && picked.length < options.maxBatch) {
        const at = leavesAt(picked);
        const wait = at - Date.now();
        if (wait > 0) return arm(at, wait);
      }
      const batch = picked.map((i) => queued[i]!);
      for (let n = picked.length - 1; n >= 0; n--) queued.splice(picked[n]!, 1);
      const keys = orderKeyOf ? batch.map((w) => orderKeyOf(w.item)) : [];
      for (const key of keys) keysOut.add(key);
      const request = sendBatch(batch).finally(() => {
        inFlight.delete(request);
        for (const key of keys) keysOut.delete(key);
        if (queued.length > 0) dispatch();
      });
      inFlight.add(request);
    }
  }

  function arm(at: number, wait: number): void {
    timerDue = at;
    timer = setTimeout(dispatch, wait);
  }

  async function sendBatch(batch: Waiting<T, R>[]): Promise<void> {
    try {
      const outcomes = await options.send(batch.map((w) => w.item));
      batch.forEach((waiting, index) => {
        const outcome = outcomes[index];
        if (outcome instanceof Error) waiting.reject(outcome);
        else if (index >= outcomes.length) waiting.reject(new Error('batch request returned no outcome for this item'));
        else waiting.resolve(outcome as R);
      });
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }

  return {
    add(item, lingerMs = options.lingerMs) {
      return new Promise<R>((resolve, reject) => {
        const due = Date.now() + Math.max(0, lingerMs);
        queued.push({ item, due, resolve, reject });
        // Nothing sooner than the departure already set can come of an item in no hurry.
        if (timer && queued.length < options.maxBatch && timerDue <= due) return;
        dispatch();
      });
    },
    async flush() {
      while (queued.length > 0 || inFlight.size > 0) {
        dispatch(true);
        await Promise.allSettled([...inFlight]);
      }
    },
  };
}
