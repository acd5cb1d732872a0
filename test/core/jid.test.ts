import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../core/errors.js';
import { newCommandId, newMessageId } from '../../core/ids.js';
import { assertJid, isGroupJid, isUserJid, isValidAccountId, normalizeJid } from '../../core/jid.js';

describe('JIDs', () => {
  it('accepts individual and group JIDs of the spec shape', () => {
    expect(isUserJid('15551234567@s.whatsapp.net')).toBe(true);
    expect(isGroupJid('15551234567-1600000000@g.us')).toBe(true);
    expect(isGroupJid('120363025246125888@g.us')).toBe(true);
  });

  it('rejects plus signs, spaces, dashes in numbers and other domains', () => {
    for (const bad of ['+15551234567@s.whatsapp.net', '1555 123@s.whatsapp.net', '1555-123@s.whatsapp.net', 'abc@g.us', '15551234567']) {
      expect(normalizeJid(bad)).toBeUndefined();
    }
    expect(() => assertJid('nope', 'to')).toThrow(ValidationError);
  });

  it('drops the device suffix', () => {
    expect(normalizeJid('15551234567:12@s.whatsapp.net')).toBe('15551234567@s.whatsapp.net');
  });

  it('validates account ids as letters and digits only', () => {
    expect(isValidAccountId('abc123')).toBe(true);
    expect(isValidAccountId('a b')).toBe(false);
    expect(isValidAccountId('a/b')).toBe(false);
    expect(isValidAccountId('')).toBe(false);
  });
});

describe('ids', () => {
  it('makes Baileys-style message ids and unique command ids', () => {
    expect(newMessageId()).toMatch(/^3EB0[0-9A-F]{36}$/);
    expect(newCommandId()).not.toBe(newCommandId());
  });
});
