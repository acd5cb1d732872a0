/**
 * Polls `probe` until it returns something other than undefined/false, and returns that value.
 * A probe that throws is retried like one that returns false; on timeout the error names `what`
 * and carries the last probe error. The suites wait with this (or expect.poll), never with fixed
 * sleeps. A plain loop rather than vi.waitFor because the benchmarks (bench/) reuse the e2e
 * support code outside the vitest runner, where vi.waitFor cannot run.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * A delay that is part of a scenario, not a wait: a handler or a receiver that is slow on
 * purpose, a client that paces its requests. To wait for something to happen, use waitFor.
 */
export function simulatedDelay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
