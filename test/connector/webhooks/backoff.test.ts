import { describe, expect, it } from 'vitest';
import { minimumRetrySpanSeconds, retryDelaySeconds } from '../../../connector/webhooks/backoff.js';

describe('retryDelaySeconds', () => {
  it('doubles per attempt from the base, never below it', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelaySeconds(attempt, 45_000, () => 0))).toEqual([45, 90, 180, 360]);
  });

  it('adds at most 25% jitter', () => {
    expect(retryDelaySeconds(1, 40_000, () => 0.999)).toBe(50);
    expect(retryDelaySeconds(3, 40_000, () => 0.5)).toBe(180);
  });

  it('is at least one second and at most the SQS visibility limit', () => {
    expect(retryDelaySeconds(1, 10, () => 0)).toBe(1);
    expect(retryDelaySeconds(30, 45_000, () => 0)).toBe(12 * 60 * 60);
  });
});

describe('minimumRetrySpanSeconds', () => {
  it('sums the waits between attempts', () => {
    expect(minimumRetrySpanSeconds(5, 45_000)).toBe(45 + 90 + 180 + 360);
    expect(minimumRetrySpanSeconds(1, 45_000)).toBe(0);
  });
});
