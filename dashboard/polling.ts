import { useEffect, useRef } from 'preact/hooks';

/**
 * Runs `task` now and then every `intervalMs` while the tab is visible; stops while it is
 * hidden (each call is a Lambda invocation and a DynamoDB read on AWS) and runs at once when it
 * shows again. One run at a time; a new `deps` restarts it.
 */
export function usePolling(task: () => Promise<unknown>, intervalMs: number, deps: readonly unknown[]): void {
  const latest = useRef(task);
  latest.current = task;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    let stopped = false;
    const run = async () => {
      if (stopped || running || document.visibilityState !== 'visible') return;
      running = true;
      clearTimeout(timer);
      try {
        await latest.current();
      } catch {
        // The task shows its own errors; polling goes on.
      } finally {
        running = false;
        if (!stopped && document.visibilityState === 'visible') timer = setTimeout(run, intervalMs);
      }
    };
    const visibilityChanged = () => {
      if (document.visibilityState === 'visible') void run();
      else clearTimeout(timer);
    };
    document.addEventListener('visibilitychange', visibilityChanged);
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', visibilityChanged);
    };
  }, deps);
}
