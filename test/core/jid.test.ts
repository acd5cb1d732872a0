import { describe, expect, it } from 'vitest';
import { newCommandId, newMessageId } from '../../core/ids.js';
import { isGroupJid, isUserJid, isValidAccountId, normalizeJid } from '../../core/jid.js';
import { jidSchema } from '../../core/schemas/jid.js';

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
    expect(jidSchema('to').safeParse('nope').error?.issues[0]?.message).toBe('to must be a valid JID');
  });

  it('drops the device suffix', () => {
    expect(normalizeJid('15551234567:12@s.whatsapp.net')).toBe('15551234567@s.whatsapp.net');
  });

  it('the jid schema yields the normalised JID of users, LIDs and groups', () => {
    const to = jidSchema('to');
    expect(to.parse('15551234567:12@S.whatsapp.net')).toBe('15551234567@s.whatsapp.net');
    expect(to.parse('123456789012345:3@lid')).toBe('123456789012345@lid');
    expect(to.parse('15551234567-1600000000@g.us')).toBe('15551234567-1600000000@g.us');
    expect(jidSchema('chatId').safeParse(42).error?.issues[0]?.message).toBe('chatId must be a valid JID');
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
