/**
 * `work`'s result, or 'timed_out' once `ms` passed first. The timer is cleared as soon as one
 * side settles, and it is not unref'd: a process waiting on a bound stays alive until the bound.
 */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | 'timed_out'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timed_out'>((resolve) => {
    timer = setTimeout(() => resolve('timed_out'), Math.max(0, ms));
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
