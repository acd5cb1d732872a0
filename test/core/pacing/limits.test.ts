import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  drawGap,
  effectivePerDay,
  emptyCounts,
  estimateTurn,
  limitsAllowAt,
  typingMs,
  withSend,
  type SendCounts,
  type SendPolicy,
} from '../../../core/pacing/limits.js';
import { defaultSettings } from '../../../core/schemas/settings.js';

const policy = (change: Partial<SendPolicy> = {}): SendPolicy => ({ ...defaultSettings(true).sendPolicy, warmup: false, ...change });
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function sendsAt(times: number[], newChat = false): SendCounts {
  return times.reduce((counts, at) => withSend(counts, at, newChat), emptyCounts());
}

describe('paced sends: the rolling limits', () => {
  it('an account with no sends may send now', () => {
    expect(limitsAllowAt(emptyCounts(), policy(), { now: T0 })).toBe(T0);
  });

  it('perMinute: the next send waits until the oldest of the minute is a minute old', () => {
    const counts = sendsAt([T0, T0 + 1_000, T0 + 2_000]);
    expect(limitsAllowAt(counts, policy({ perMinute: 3 }), { now: T0 + 3_000 })).toBe(T0 + 60_000);
    expect(limitsAllowAt(counts, policy({ perMinute: 4 }), { now: T0 + 3_000 })).toBe(T0 + 3_000);
    expect(limitsAllowAt(counts, policy({ perMinute: 2 }), { now: T0 + 3_000 })).toBe(T0 + 61_000);
  });

  it('perHour is counted by minutes: a minute leaves the hour once its last millisecond is an hour old', () => {
    const counts = sendsAt([T0, T0 + 61_000]);
    const at = limitsAllowAt(counts, policy({ perHour: 2, perMinute: 100 }), { now: T0 + 120_000 });
    expect(at).toBe(T0 + 60_000 + 3_600_000);
  });

  it('perDay, and the warm-up of a number linked less than 10 days ago', () => {
    expect(effectivePerDay(policy({ warmup: true }), T0, T0)).toBe(50);
    expect(effectivePerDay(policy({ warmup: true }), T0, T0 + 2 * DAY_MS)).toBe(150);
    expect(effectivePerDay(policy({ warmup: true }), T0, T0 + 9 * DAY_MS)).toBe(1000);
    expect(effectivePerDay(policy({ warmup: true }), T0, T0 + 10 * DAY_MS)).toBe(1500);
    expect(effectivePerDay(policy({ warmup: true, perDay: 30 }), T0, T0)).toBe(30);
    expect(effectivePerDay(policy({ warmup: false }), T0, T0)).toBe(1500);
    expect(effectivePerDay(policy({ warmup: true }), undefined, T0)).toBe(1500);
    const times = Array.from({ length: 50 }, (_, i) => T0 + i * 61_000);
    const counts = sendsAt(times);
    const now = times[49] as number;
    const allowed = limitsAllowAt(counts, policy({ warmup: true, perMinute: 100, perHour: 100_000 }), { now, linkedAt: T0 });
    expect(allowed).toBe(Math.floor(T0 / 60_000 + 1) * 60_000 + DAY_MS);
  });

  it('new chats per day hold only first messages; 0 means none at all', () => {
    const counts = sendsAt([T0, T0 + 1_000], true);
    const p = policy({ newChatsPerDay: 2, perMinute: 100 });
    expect(limitsAllowAt(counts, p, { now: T0 + 2_000, newChat: false })).toBe(T0 + 2_000);
    expect(limitsAllowAt(counts, p, { now: T0 + 2_000, newChat: true })).toBe(Math.floor(T0 / 60_000 + 1) * 60_000 + DAY_MS);
    expect(limitsAllowAt(emptyCounts(), policy({ newChatsPerDay: 0 }), { now: T0, newChat: true })).toBe(Number.POSITIVE_INFINITY);
  });

  it('the gap is drawn from min to max inclusive; typing is 50 ms a character, 1 to 6 s', () => {
    const p = policy({ gapMs: { min: 200, max: 400 } });
    expect(drawGap(p, () => 0)).toBe(200);
    expect(drawGap(p, () => 0.999_999)).toBe(400);
    expect(typingMs('hi')).toBe(1_000);
    expect(typingMs('x'.repeat(60))).toBe(3_000);
    expect(typingMs('x'.repeat(500))).toBe(6_000);
  });

  it('the turn behind queued sends: each ahead a gap min after the last, the limits counted', () => {
    const p = policy({ perMinute: 2, gapMs: { min: 1_000, max: 2_000 } });
    const counts = sendsAt([T0]);
    // One ahead: it goes at T0 + 1 s (gap min), which fills the minute; this one waits for T0's minute to end.
    expect(estimateTurn(counts, p, { now: T0 + 10, ahead: 1 })).toEqual({ notBefore: T0 + 60_000, earliest: T0 + 60_000 });
    expect(estimateTurn(counts, p, { now: T0 + 10, ahead: 0 })).toEqual({ notBefore: T0 + 10, earliest: T0 + 1_000 });
    // A pause: not before its end.
    expect(estimateTurn(emptyCounts(), p, { now: T0, ahead: 0, from: T0 + 5_000 }).notBefore).toBe(T0 + 5_000);
    // Past `until`, the walk stops.
    expect(estimateTurn(counts, p, { now: T0, ahead: 1_000, until: T0 + 120_000 }).earliest).toBeGreaterThan(T0 + 120_000);
  });
});
