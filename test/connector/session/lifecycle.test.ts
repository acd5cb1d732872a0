import { describe, expect, it } from 'vitest';
import { canMove, isWindingDown, statusOf, type Lifecycle } from '../../../connector/session/lifecycle.js';

const ALL: Lifecycle[] = ['idle', 'connecting', 'awaiting_scan', 'reconnecting', 'connected', 'halted', 'stopped', 'logged_out'];

describe('the session lifecycle', () => {
  it('stopped is final: nothing leaves it', () => {
    expect(ALL.filter((to) => canMove('stopped', to))).toEqual(['stopped']);
  });

  it('logged out only ends: no socket, no QR, no connect on that session', () => {
    expect(ALL.filter((to) => canMove('logged_out', to))).toEqual(['stopped', 'logged_out']);
  });

  it('halted (connector stopping) never opens a socket again: no connecting, QR, reconnecting or connected', () => {
    for (const to of ['connecting', 'awaiting_scan', 'reconnecting', 'connected'] as const) expect(canMove('halted', to)).toBe(false);
    expect(canMove('halted', 'stopped')).toBe(true);
    expect(canMove('halted', 'logged_out')).toBe(true);
  });

  it('a session not started cannot be connected or show a QR before it opens a socket', () => {
    expect(canMove('idle', 'connected')).toBe(false);
    expect(canMove('idle', 'awaiting_scan')).toBe(false);
    expect(canMove('idle', 'logged_out')).toBe(false);
  });

  it('a connected socket shows no QR', () => {
    expect(canMove('connected', 'awaiting_scan')).toBe(false);
  });

  it('every lifecycle can stop, and every live one can be halted', () => {
    for (const from of ALL) expect(canMove(from, 'stopped')).toBe(true);
    for (const from of ['idle', 'connecting', 'awaiting_scan', 'reconnecting', 'connected'] as const)
      expect(canMove(from, 'halted')).toBe(true);
  });

  it('the link path and the reconnect path are open', () => {
    const path = (...steps: Lifecycle[]) => steps.every((step, i) => i === 0 || canMove(steps[i - 1]!, step));
    expect(path('idle', 'connecting', 'awaiting_scan', 'awaiting_scan', 'connecting', 'connected')).toBe(true);
    expect(path('idle', 'reconnecting', 'connected', 'reconnecting', 'reconnecting', 'connected', 'logged_out', 'stopped')).toBe(true);
  });

  it('each lifecycle stands for one account status, except those that keep theirs', () => {
    expect(statusOf('idle')).toEqual({ status: 'not_started', hasQR: false });
    expect(statusOf('connecting')).toEqual({ status: 'connecting', hasQR: false });
    expect(statusOf('awaiting_scan')).toEqual({ status: 'connecting', hasQR: true });
    expect(statusOf('reconnecting')).toEqual({ status: 'reconnecting', hasQR: false });
    expect(statusOf('connected')).toEqual({ status: 'connected', hasQR: false });
    expect(statusOf('logged_out')).toEqual({ status: 'logged_out', hasQR: false });
    expect(statusOf('halted')).toBeUndefined();
    expect(statusOf('stopped')).toBeUndefined();
  });

  it('winding down: halted, stopped, logged out', () => {
    expect(ALL.filter(isWindingDown)).toEqual(['halted', 'stopped', 'logged_out']);
  });
});
