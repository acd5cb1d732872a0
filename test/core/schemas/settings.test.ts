import { describe, expect, it } from 'vitest';
import { defaultSettings, maskProxyUrl, mergeSettings, settingsView, storedSettingsOf } from '../../../core/schemas/settings.js';

/** The pure parts of the settings (core/schemas/settings.ts): masking, merging, reading a stored item. */
describe('maskProxyUrl', () => {
  it.each([
    ['http://proxy.example.com:8080', 'http://proxy.example.com:8080'],
    ['http://user:secret@proxy.example.com:8080', 'http://user:***@proxy.example.com:8080'],
    ['https://user:s3cr%40t@proxy.example.com', 'https://user:***@proxy.example.com'],
    ['socks5://user:pa:ss@[::1]:1080', 'socks5://user:***@[::1]:1080'],
    // A raw @ in the password: WHATWG parsing ends the user information at the last @.
    ['http://user:p@ss@proxy.example.com', 'http://user:***@proxy.example.com'],
    ['socks5://user@proxy.example.com:1080', 'socks5://user@proxy.example.com:1080'],
    ['socks5://user:@proxy.example.com:1080', 'socks5://user:@proxy.example.com:1080'],
    ['http://proxy.example.com/', 'http://proxy.example.com/'],
  ])('%s is answered as %s', (url, answered) => {
    expect(maskProxyUrl(url)).toBe(answered);
    if (url.includes('@')) expect(new URL(answered).host).toBe(new URL(url).host);
  });
});

describe('mergeSettings', () => {
  const base = defaultSettings(true);

  it('changes only the fields given, at every depth, and never the object it was given', () => {
    const before = structuredClone(base);
    const merged = mergeSettings(base, { sendPolicy: { gapMs: { max: 9000 } }, rejectCalls: true });
    expect(merged).toEqual({ ...base, sendPolicy: { ...base.sendPolicy, gapMs: { min: 2000, max: 9000 } }, rejectCalls: true });
    expect(base).toEqual(before);
  });

  it('null removes the proxy and the call-reject message; undefined leaves them', () => {
    const withBoth = mergeSettings(base, { proxy: { url: 'http://p.example.com' }, callRejectMessage: 'no calls' });
    expect(mergeSettings(withBoth as typeof base, {})).toEqual(withBoth);
    expect(mergeSettings(withBoth as typeof base, { proxy: null, callRejectMessage: null })).toEqual(base);
  });

  it('the gap: min above max is a problem, whichever side the patch moved', () => {
    expect(mergeSettings(base, { sendPolicy: { gapMs: { min: 6001 } } })).toEqual({
      problem: 'sendPolicy.gapMs.min must not be above sendPolicy.gapMs.max',
    });
    expect(mergeSettings(base, { sendPolicy: { gapMs: { max: 1999 } } })).toHaveProperty('problem');
    expect(mergeSettings(base, { sendPolicy: { gapMs: { min: 6000 } } })).not.toHaveProperty('problem');
  });

  it('the masked URL sent back keeps the stored password only when the rest is the same', () => {
    const stored = mergeSettings(base, { proxy: { url: 'socks5://me:pw@p.example.com:1080' } }) as typeof base;
    const shown = settingsView(stored).proxy?.url ?? '';
    expect(shown).toBe('socks5://me:***@p.example.com:1080');
    expect(mergeSettings(stored, { proxy: { url: shown } })).toMatchObject({ proxy: { url: 'socks5://me:pw@p.example.com:1080' } });
    expect(mergeSettings(stored, { proxy: { url: 'socks5://me:***@p.example.com:1081' } })).toMatchObject({
      proxy: { url: 'socks5://me:***@p.example.com:1081' },
    });
    expect(mergeSettings(base, { proxy: { url: shown } })).toMatchObject({ proxy: { url: shown } });
  });
});

describe('storedSettingsOf', () => {
  it('nothing stored: the defaults, sendPolicy.enabled as the deployment says', () => {
    expect(storedSettingsOf(undefined, true)).toEqual(defaultSettings(true));
    expect(storedSettingsOf(undefined, false).sendPolicy.enabled).toBe(false);
  });

  it('a field absent or no longer valid takes its default; the others are kept', () => {
    const read = storedSettingsOf({ sendPolicy: { perMinute: 0, perHour: 99, future: 1 }, rejectCalls: true, history: 'all' }, true);
    expect(read).toEqual({ ...defaultSettings(true), sendPolicy: { ...defaultSettings(true).sendPolicy, perHour: 99 }, rejectCalls: true });
  });

  it('stored enabled: false stays false whatever the deployment now says', () => {
    expect(storedSettingsOf({ sendPolicy: { enabled: false } }, true).sendPolicy.enabled).toBe(false);
  });
});
