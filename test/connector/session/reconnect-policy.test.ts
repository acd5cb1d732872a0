import { describe, expect, it } from 'vitest';
import { DisconnectReason } from '@whiskeysockets/baileys';
import { closeReason, decideAfterClose, MAX_QR_ROUNDS, reconnectDelay } from '../../../connector/session/reconnect-policy.js';

const base = { failures: 0, linked: true, qrRounds: 0, random: () => 0.5 };

describe('what a session does after its socket closed', () => {
  it('515 restart required (after pairing): reconnect at once', () => {
    expect(decideAfterClose({ ...base, statusCode: DisconnectReason.restartRequired })).toEqual({ kind: 'restart_now' });
  });

  it('401 logged out by the phone: logged_out, no reconnect', () => {
    expect(decideAfterClose({ ...base, statusCode: DisconnectReason.loggedOut })).toEqual({ kind: 'logged_out' });
  });

  it('a dropped connection: retry about 5 s later', () => {
    const decision = decideAfterClose({ ...base, statusCode: DisconnectReason.connectionClosed });
    expect(decision).toEqual({ kind: 'retry_later', delayMs: 5_000 });
  });

  it('repeated failures back off, capped at a minute', () => {
    expect(reconnectDelay(1, () => 0.5)).toBe(10_000);
    expect(reconnectDelay(2, () => 0.5)).toBe(20_000);
    expect(reconnectDelay(10, () => 0.5)).toBe(60_000);
  });

  it('jitter keeps delays within ±20 %', () => {
    expect(reconnectDelay(0, () => 0)).toBe(4_000);
    expect(reconnectDelay(0, () => 1)).toBe(6_000);
  });

  it('QR never scanned: a few rounds, then give up', () => {
    const unlinked = { ...base, linked: false, statusCode: DisconnectReason.timedOut };
    expect(decideAfterClose({ ...unlinked, qrRounds: 0 }).kind).toBe('retry_later');
    expect(decideAfterClose({ ...unlinked, qrRounds: MAX_QR_ROUNDS - 1 })).toEqual({ kind: 'give_up_qr' });
  });

  it('405 at login (the version is too old): log in again, after the drop backoff unless a newer version is found', () => {
    expect(decideAfterClose({ ...base, statusCode: 405 })).toEqual({ kind: 'version_refused', delayMs: 5_000 });
    expect(decideAfterClose({ ...base, failures: 2, linked: false, statusCode: 405 })).toEqual({
      kind: 'version_refused',
      delayMs: 20_000,
    });
  });

  it('a timeout of a linked device is a drop, not a QR expiry', () => {
    expect(decideAfterClose({ ...base, qrRounds: 10, statusCode: DisconnectReason.timedOut }).kind).toBe('retry_later');
  });
});

describe('the reason a close gives the account status', () => {
  it.each([
    [DisconnectReason.restartRequired, true, 'restart_required'],
    [DisconnectReason.loggedOut, true, 'logged_out'],
    [DisconnectReason.forbidden, true, 'removed_by_whatsapp'],
    [DisconnectReason.connectionReplaced, true, 'replaced'],
    [DisconnectReason.connectionClosed, true, 'connection_lost'],
    [DisconnectReason.timedOut, true, 'connection_lost'],
    [DisconnectReason.timedOut, false, 'qr_timeout'],
    [DisconnectReason.badSession, true, 'connection_lost'],
    [405, true, 'client_too_old'],
    [405, false, 'client_too_old'],
    [undefined, true, 'connection_lost'],
  ] as const)('%s (linked: %s): %s', (statusCode, linked, reason) => {
    expect(closeReason(statusCode, linked)).toBe(reason);
  });
});
