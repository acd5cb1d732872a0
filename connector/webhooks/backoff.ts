/** SQS refuses a visibility timeout above 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;
/** Up to this fraction is added at random, so receivers that came back are not hit in waves. */
const JITTER = 0.25;

/**
 * Seconds to wait after failed attempt number `attempt` (1-based): base * 2^(attempt-1), plus
 * up to 25% jitter (only ever added, so the configured schedule is the minimum), at least 1 s
 * (SQS counts whole seconds).
 */
export function retryDelaySeconds(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const exponential = baseMs * 2 ** Math.max(0, attempt - 1);
  const withJitter = exponential * (1 + JITTER * random());
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, Math.ceil(withJitter / 1000)));
}

/** The shortest total wait before an event is given up: the sum of the delays without jitter. */
export function minimumRetrySpanSeconds(maxAttempts: number, baseMs: number): number {
  let total = 0;
  for (let attempt = 1; attempt < maxAttempts; attempt += 1) total += retryDelaySeconds(attempt, baseMs, () => 0);
  return total;
}
