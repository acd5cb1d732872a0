import type { AccountSettings } from '../schemas/settings.js';

/**
 * The pure part of paced sends (docs/sending.md#paced-sends): which sends an account made
 * recently, when its limits let the next one go, the gap drawn between two sends, how long
 * "typing…" shows before a text, and the warm-up of a newly linked number. No clock, no I/O:
 * every function takes `now`, so the unit tests walk through days in microseconds.
 */

export type SendPolicy = AccountSettings['sendPolicy'];

const MINUTE_MS = 60_000;

/** The `detail` of a plain send refused because its turn comes after its deadline (docs/sending.md#paced-sends). */
export const RATE_LIMIT_DETAIL = 'send rate limit';
/**
 * A plain send whose turn comes later than this before its deadline is refused at once: the
 * connector's claim must land before the deadline, and a turn at the very end would lose that race.
 */
export const CLAIM_MARGIN_MS = 500;
const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/**
 * What an account sent lately. The rolling minute is counted exactly (each send's time), the
 * rolling hour and day by minute buckets (a bucket leaves the window once its last millisecond
 * has): at most a minute too cautious, and at most 1,440 buckets whatever the rate, so the item
 * holding them stays small (core/store/send-queue.ts).
 */
export interface SendCounts {
  /** Unix ms of each send within the last minute, oldest first. */
  recent: number[];
  /** `[minute, sends]` (minute = Unix ms / 60,000, floored) for the last day, oldest first. */
  minutes: [number, number][];
  /** `[minute, first sends to a chat]` for the last day, oldest first. */
  newChats: [number, number][];
  /** Unix ms of the last send handed to WhatsApp: the next gap counts from it. */
  lastSentAt?: number;
}

export const emptyCounts = (): SendCounts => ({ recent: [], minutes: [], newChats: [] });

/**
 * `perDay` of a number linked `days` ago, days 0 to 9 (docs/sending.md): WhatsApp judges a
 * new number more harshly, so its daily sends start at 50 and rise every two days.
 */
const WARMUP_PER_DAY = [50, 50, 150, 150, 300, 300, 600, 600, 1000, 1000];

/** The daily limit in force at `now`: `perDay`, ramped down while a linked number is new. */
export function effectivePerDay(policy: SendPolicy, linkedAt: number | undefined, now: number): number {
  if (!policy.warmup || linkedAt === undefined) return policy.perDay;
  const day = Math.floor((now - linkedAt) / DAY_MS);
  const ramp = day >= 0 ? WARMUP_PER_DAY[day] : WARMUP_PER_DAY[0];
  return ramp === undefined ? policy.perDay : Math.min(policy.perDay, ramp);
}

/** The counts without what has left every window by `now`. */
function pruned(counts: SendCounts, now: number): SendCounts {
  const firstMinute = Math.floor((now - DAY_MS) / MINUTE_MS);
  return {
    recent: counts.recent.filter((at) => at > now - MINUTE_MS),
    minutes: counts.minutes.filter(([minute]) => minute >= firstMinute),
    newChats: counts.newChats.filter(([minute]) => minute >= firstMinute),
    ...(counts.lastSentAt !== undefined ? { lastSentAt: counts.lastSentAt } : {}),
  };
}

/**
 * The earliest time from `now` on at which fewer than `limit` of `buckets` (`[minute, count]`,
 * oldest first) are within the last `windowMs`. A bucket leaves the window once its last
 * millisecond is `windowMs` old.
 */
function bucketsAllowAt(buckets: [number, number][], limit: number, windowMs: number, now: number): number {
  const inWindow = buckets.filter(([minute]) => (minute + 1) * MINUTE_MS + windowMs > now);
  let total = inWindow.reduce((sum, [, count]) => sum + count, 0);
  if (total < limit) return now;
  for (const [minute, count] of inWindow) {
    total -= count;
    if (total < limit) return (minute + 1) * MINUTE_MS + windowMs;
  }
  return now;
}

/** The earliest time from `now` on at which fewer than `limit` of `times` (oldest first) are within the last minute. */
function timesAllowAt(times: number[], limit: number, now: number): number {
  const inWindow = times.filter((at) => at > now - MINUTE_MS);
  if (inWindow.length < limit) return now;
  return (inWindow[inWindow.length - limit] as number) + MINUTE_MS;
}

/**
 * The earliest time from `now` on at which the account's rolling limits let one more send go:
 * per minute, hour and day (warm-up included), and per day of new chats when `newChat`.
 * Infinity when `newChatsPerDay` is 0 and the send starts a chat.
 */
export function limitsAllowAt(
  counts: SendCounts,
  policy: SendPolicy,
  at: { now: number; linkedAt?: number | undefined; newChat?: boolean },
): number {
  const { now } = at;
  if (at.newChat && policy.newChatsPerDay === 0) return Number.POSITIVE_INFINITY;
  const perDay = effectivePerDay(policy, at.linkedAt, now);
  return Math.max(
    timesAllowAt(counts.recent, policy.perMinute, now),
    bucketsAllowAt(counts.minutes, policy.perHour, HOUR_MS, now),
    bucketsAllowAt(counts.minutes, perDay, DAY_MS, now),
    at.newChat ? bucketsAllowAt(counts.newChats, policy.newChatsPerDay, DAY_MS, now) : now,
  );
}

function addToBucket(buckets: [number, number][], minute: number): [number, number][] {
  const last = buckets[buckets.length - 1];
  if (last && last[0] === minute) return [...buckets.slice(0, -1), [minute, last[1] + 1]];
  return [...buckets, [minute, 1]];
}

/** The counts after a send handed to WhatsApp at `at` (`newChat`: the first to its chat). */
export function withSend(counts: SendCounts, at: number, newChat: boolean): SendCounts {
  const minute = Math.floor(at / MINUTE_MS);
  const kept = pruned(counts, at);
  return {
    recent: [...kept.recent, at],
    minutes: addToBucket(kept.minutes, minute),
    newChats: newChat ? addToBucket(kept.newChats, minute) : kept.newChats,
    lastSentAt: at,
  };
}

/** A random gap of the policy, from `min` to `max` inclusive. */
export function drawGap(policy: SendPolicy, random: () => number = Math.random): number {
  const { min, max } = policy.gapMs;
  return min + Math.floor(random() * (max - min + 1));
}

/** "typing…" before a text: about 50 ms a character, 1 to 6 s (docs/sending.md). */
export function typingMs(text: string): number {
  return Math.min(6_000, Math.max(1_000, 50 * text.length));
}

/**
 * When the send behind `ahead` queued ones may go at the earliest: each send ahead goes as early
 * as the limits allow, the gap's `min` after the one before it, and counts. `notBefore` leaves
 * the send's own gap out (the `notBefore` of docs/sending.md); `earliest` adds its `min` (what a
 * plain send's deadline is judged by). Sends ahead are assumed not to start chats (the API does
 * not look); a first message to a new chat may go later than this says. `from`: not before it (a
 * send pause). Past `until` the walk stops, answering a time past it.
 */
export function estimateTurn(
  counts: SendCounts,
  policy: SendPolicy,
  at: { now: number; linkedAt?: number | undefined; ahead: number; from?: number; until?: number },
): { notBefore: number; earliest: number } {
  let state = pruned(counts, at.now);
  let t = Math.max(at.now, at.from ?? 0);
  const until = at.until ?? Number.POSITIVE_INFINITY;
  const afterGap = (from: number) => (state.lastSentAt === undefined ? from : Math.max(from, state.lastSentAt + policy.gapMs.min));
  for (let i = 0; i < at.ahead; i++) {
    t = limitsAllowAt(state, policy, { now: afterGap(t), linkedAt: at.linkedAt });
    if (t > until) return { notBefore: t, earliest: t };
    state = withSend(state, t, false);
  }
  return {
    notBefore: limitsAllowAt(state, policy, { now: t, linkedAt: at.linkedAt }),
    earliest: limitsAllowAt(state, policy, { now: afterGap(t), linkedAt: at.linkedAt }),
  };
}
