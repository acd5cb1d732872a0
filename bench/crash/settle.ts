import { sleep } from './poll.js';

const SAMPLE_EVERY_MS = 5_000;

export interface Settled {
  /** False when the cap ended the wait while things were still changing. */
  settled: boolean;
  /** From the start of the wait to the last change seen, in seconds. */
  lastChangeSeconds: number;
}

/**
 * Waits until what `sample` observes (a fingerprint such as "stored/posted" counts) has not
 * changed for `quietMs`, or until `capMs`. `sample` throwing (the gateway died) fails the wait.
 */
export async function waitUntilQuiet(sample: () => Promise<string>, quietMs: number, capMs: number): Promise<Settled> {
  const start = performance.now();
  let last = await sample();
  let lastChange = start;
  for (;;) {
    await sleep(SAMPLE_EVERY_MS);
    const now = performance.now();
    const current = await sample();
    if (current !== last) {
      last = current;
      lastChange = now;
    }
    const lastChangeSeconds = (lastChange - start) / 1000;
    if (now - lastChange >= quietMs) return { settled: true, lastChangeSeconds };
    if (now - start >= capMs) return { settled: false, lastChangeSeconds };
  }
}
