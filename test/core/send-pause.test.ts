import { describe, expect, it } from 'vitest';
import { activePause, isMessageSend, MAX_SEND_PAUSE_MS, nextPause, refusalOf, retryAfterSeconds } from '../../core/send-pause.js';

const MIN = 60_000;

describe('send pauses after WhatsApp refuses a send', () => {
  it('names the refusal: 429 and 463 pause, any other error only fails the send', () => {
    expect(refusalOf('429')).toEqual({ detail: 'WhatsApp refused the send: rate_limited (429)', pause: 'rate_limited' });
    expect(refusalOf('463')).toEqual({ detail: 'WhatsApp refused the send: reachout_timelock (463)', pause: 'reachout_timelock' });
    expect(refusalOf('479')).toEqual({ detail: 'WhatsApp refused the send (error 479)' });
  });

  it('a first refusal pauses for the minimum', () => {
    expect(nextPause(undefined, { reason: 'rate_limited', sentAt: 1_000, now: 2_000 }, MIN)).toEqual({
      reason: 'rate_limited',
      until: 2_000 + MIN,
      durationMs: MIN,
    });
  });

  it('a refusal within the pause or as long again after it doubles the pause, up to 24 h', () => {
    const first = { reason: 'rate_limited' as const, until: 100_000 + MIN, durationMs: MIN };
    // Sent after the pause began (it got past it), refused within it.
    expect(nextPause(first, { reason: 'reachout_timelock', sentAt: 110_000, now: 111_000 }, MIN)).toEqual({
      reason: 'reachout_timelock',
      until: 111_000 + 2 * MIN,
      durationMs: 2 * MIN,
    });
    // Soon after resuming: within `durationMs` after `until`.
    const soon = first.until + MIN - 1;
    expect(nextPause(first, { reason: 'rate_limited', sentAt: soon - 10, now: soon }, MIN)?.durationMs).toBe(2 * MIN);
    const long = { reason: 'rate_limited' as const, until: 1_000_000, durationMs: 16 * 60 * 60_000 };
    expect(nextPause(long, { reason: 'rate_limited', sentAt: 1_000_000, now: 1_000_001 }, MIN)?.durationMs).toBe(MAX_SEND_PAUSE_MS);
  });

  it('a refusal long after the last pause starts again from the minimum', () => {
    const old = { reason: 'rate_limited' as const, until: 100_000, durationMs: 4 * MIN };
    const later = old.until + old.durationMs;
    expect(nextPause(old, { reason: 'rate_limited', sentAt: later - 5, now: later }, MIN)?.durationMs).toBe(MIN);
  });

  it('sends already in flight when the pause began do not lengthen it: one burst is one refusal', () => {
    const pause = { reason: 'rate_limited' as const, until: 100_000 + MIN, durationMs: MIN };
    expect(nextPause(pause, { reason: 'rate_limited', sentAt: 99_999, now: 100_500 }, MIN)).toBeUndefined();
  });

  it('is in force until `until`, and a send may be retried after whole seconds, at least one', () => {
    const pause = { reason: 'rate_limited' as const, until: 10_000, durationMs: MIN };
    expect(activePause(pause, 9_999)).toBe(pause);
    expect(activePause(pause, 10_000)).toBeUndefined();
    expect(activePause(undefined, 0)).toBeUndefined();
    expect(retryAfterSeconds(10_000, 8_500)).toBe(2);
    expect(retryAfterSeconds(10_000, 9_999)).toBe(1);
    expect(retryAfterSeconds(10_000, 20_000)).toBe(1);
  });

  it('holds message sends only: read receipts and presence send no message', () => {
    expect(isMessageSend('send_text')).toBe(true);
    expect(isMessageSend('send_media')).toBe(true);
    expect(isMessageSend('mark_chat_read')).toBe(false);
    expect(isMessageSend('send_presence')).toBe(false);
  });
});
