import { describe, expect, it } from 'vitest';
import { redactBinary, redactFields } from '../../core/redact.js';

describe('redactBinary', () => {
  it('replaces every byte array by its length, at any depth, and cuts cycles', () => {
    const cyclic: Record<string, unknown> = { key: Buffer.alloc(32, 7), nested: [{ chainKey: { key: new Uint8Array(16) } }] };
    cyclic.self = cyclic;
    expect(redactBinary(cyclic)).toEqual({
      key: '[32 bytes]',
      nested: [{ chainKey: { key: '[16 bytes]' } }],
      self: '[Circular]',
    });
    expect(redactBinary(new ArrayBuffer(4))).toBe('[4 bytes]');
    expect(redactBinary(new Float64Array(2))).toBe('[16 bytes]');
  });

  it('leaves values without byte arrays untouched (same objects), and keeps errors', () => {
    const at = new Date(0);
    const plain = { at, list: [1, 'two', { three: 3 }], shared: { n: 1 } };
    expect(redactBinary(plain)).toBe(plain);
    const error = Object.assign(new Error('boom'), { detail: 'x' });
    expect(redactBinary(error)).toBe(error);
    expect(redactBinary('text')).toBe('text');
    expect(redactBinary(undefined)).toBeUndefined();
  });

  it('a value referenced twice (not a cycle) is redacted in both places', () => {
    const shared = { privKey: Buffer.alloc(32) };
    expect(redactBinary({ a: shared, b: shared })).toEqual({ a: { privKey: '[32 bytes]' }, b: { privKey: '[32 bytes]' } });
  });

  it('a class instance holding keys (a session record) becomes a plain copy without them', () => {
    class SessionEntry {
      currentRatchet = { rootKey: Buffer.alloc(32, 1), ephemeralKeyPair: { privKey: Buffer.alloc(32, 2) } };
    }
    expect(JSON.stringify(redactBinary({ session: new SessionEntry() }))).toBe(
      '{"session":{"currentRatchet":{"rootKey":"[32 bytes]","ephemeralKeyPair":{"privKey":"[32 bytes]"}}}}',
    );
  });
});

describe("redactFields (the logger's fields)", () => {
  it('redacts buffers in fields and returns the same object when there are none', () => {
    expect(redactFields({ accountId: 'a', creds: { noiseKey: { private: Buffer.alloc(32) } } })).toEqual({
      accountId: 'a',
      creds: { noiseKey: { private: '[32 bytes]' } },
    });
    const fields = { accountId: 'a', at: new Date(0) };
    expect(redactFields(fields)).toBe(fields);
  });
});
