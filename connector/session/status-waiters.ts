/**
 * Waits for a session to reach a state: each waiter probes the session whenever its status
 * changes (`notify`) and resolves with the first answer its probe gives, or with `otherwise`
 * once `timeoutMs` passed. What a command waits on (connected, a socket waiting for a link).
 */
export class StatusWaiters {
  private readonly listeners = new Set<() => void>();

  until<T>(probe: () => T | undefined, timeoutMs: number, otherwise: T): Promise<T> {
    const now = probe();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve) => {
      const done = (value: T) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(value);
      };
      const check = () => {
        const answer = probe();
        if (answer !== undefined) done(answer);
      };
      const timer = setTimeout(() => done(otherwise), timeoutMs);
      this.listeners.add(check);
    });
  }

  notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
