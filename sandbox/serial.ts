// The same executor as core/serial.ts: the sandbox stands alone (it imports Baileys' codecs only).

/**
 * Work run one at a time, in call order. A failure reaches only the caller of that work: the
 * work queued after it still runs.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;

  /** @param onIdle called each time the last queued work has settled */
  constructor(private readonly onIdle?: () => void) {}

  /** Runs `work` after everything queued before it has settled; resolves or rejects as `work` does. */
  run<T>(work: () => T | PromiseLike<T>): Promise<T> {
    this.pending += 1;
    const result = this.tail.then(() => work());
    this.tail = result.then(
      () => this.settle(),
      () => this.settle(),
    );
    return result;
  }

  /** Resolves (never rejects) once the work queued so far has settled. */
  drained(): Promise<void> {
    return this.tail;
  }

  private settle(): void {
    this.pending -= 1;
    if (this.pending === 0) this.onIdle?.();
  }
}

/**
 * One `SerialQueue` per key: work on one key runs in call order, work on different keys runs
 * in parallel. A key's queue is forgotten once it is idle, so the map holds only busy keys.
 */
export class KeyedSerial {
  private readonly queues = new Map<string, SerialQueue>();

  run<T>(key: string, work: () => T | PromiseLike<T>): Promise<T> {
    let queue = this.queues.get(key);
    if (!queue) {
      const created = new SerialQueue(() => {
        if (this.queues.get(key) === created) this.queues.delete(key);
      });
      this.queues.set(key, created);
      queue = created;
    }
    return queue.run(work);
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.queues.size;
  }
}
