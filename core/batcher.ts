/**
 * Group commit for AWS calls that have a batch form (SQS SendMessageBatch and
 * DeleteMessageBatch, DynamoDB BatchWriteItem): each caller adds one item and awaits its own
 * outcome, exactly as with the single call; items added close together travel in one request.
 *
 *   const sends = createBatcher({ maxBatch: 10, lingerMs: 5, maxInFlight: 4, send });
 *   await sends.add(item);   // resolves when the request carrying `item` succeeded for it
 *
 * A batch leaves when it is full, when an item has waited its linger, or, while `maxInFlight`
 * requests are already out, as soon as one of them comes back (the items that queued meanwhile
 * go together: the busier, the bigger the batches). An item may bring its own linger: one that
 * is in no hurry (a deletion) waits long, and rides along whenever a more pressing one leaves.
 */
export interface BatcherOptions<T, R> {
  maxBatch: number;
  /** How long a lone item waits for company; 0 sends at once when a request slot is free. */
  lingerMs: number;
  /** Requests out at once. 1 also keeps batches in order (a later write never lands first). */
  maxInFlight: number;
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
  resolve(result: R): void;
  reject(error: unknown): void;
}

export function createBatcher<T, R>(options: BatcherOptions<T, R>): Batcher<T, R> {
  const queued: Waiting<T, R>[] = [];
  const inFlight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms): an item due sooner moves it earlier. */
  let timerDue = 0;

  function dispatch(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (queued.length > 0 && inFlight.size < options.maxInFlight) {
      const batch = queued.splice(0, options.maxBatch);
      const request = sendBatch(batch).finally(() => {
        inFlight.delete(request);
        // A lingering batch keeps its timer; one whose time is up (or that is full) goes now.
        if (queued.length >= options.maxBatch || (queued.length > 0 && !timer)) dispatch();
      });
      inFlight.add(request);
    }
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
        queued.push({ item, resolve, reject });
        if (queued.length >= options.maxBatch || lingerMs <= 0) return dispatch();
        const due = Date.now() + lingerMs;
        if (timer && timerDue <= due) return;
        if (timer) clearTimeout(timer);
        timerDue = due;
        timer = setTimeout(dispatch, lingerMs);
      });
    },
    async flush() {
      while (queued.length > 0 || inFlight.size > 0) {
        dispatch();
        await Promise.allSettled([...inFlight]);
      }
    },
  };
}
