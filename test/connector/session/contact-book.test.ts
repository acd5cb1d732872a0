import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContactBook } from '../../../connector/session/contact-book.js';
import { chatWriterOf } from '../../../core/store/chat-writer.js';
import { findChat, updateChat } from '../../../core/store/chats.js';
import { findContact } from '../../../core/store/contacts.js';
import { countedTable, type CountedTable } from '../../support/counted-table.js';
import { silentLogger, useTestStack } from '../../support/test-stack.js';

/**
 * What a session does with the contacts Baileys reports (connector/session/contact-book.ts),
 * against the DynamoDB emulator: the shapes of `contacts.upsert` and `contacts.update` as
 * Baileys emits them (a push name with a message, a name from the phone's address book, a LID).
 */
describe('the contact book of a session', () => {
  const t = useTestStack();
  let counted: CountedTable;
  const accountId = 'cbook1';
  const dan = '15550920001@s.whatsapp.net';
  const writes = () => counted.counts.get('UpdateItemCommand') ?? 0;

  beforeAll(() => {
    counted = countedTable(t.stack.config);
  });
  afterAll(() => counted?.close());

  it('a push name names the contact and its chat; the saved name then wins, and a later push name changes only the contact', async () => {
    const book = new ContactBook({ table: counted.table, accountId, logger: silentLogger });
    await updateChat(t.table, accountId, dan, { at: 1_000 });
    await book.learn([{ id: dan, notify: 'Dan' }]);
    expect(await findContact(t.table, accountId, dan)).toEqual({ jid: dan, phone: '15550920001', pushName: 'Dan' });
    expect((await findChat(t.table, accountId, dan))?.name).toBe('Dan');

    await book.learn([{ id: dan, name: 'Daniel (work)' }]);
    expect(book.savedNameOf(dan)).toBe('Daniel (work)');
    expect((await findChat(t.table, accountId, dan))?.name).toBe('Daniel (work)');

    await book.learn([{ id: dan, notify: 'Danny' }]);
    expect(await findContact(t.table, accountId, dan)).toEqual({
      jid: dan,
      phone: '15550920001',
      name: 'Daniel (work)',
      pushName: 'Danny',
    });
    expect((await findChat(t.table, accountId, dan))?.name).toBe('Daniel (work)');
  });

  it('a rename is kept when the next message moves the chat (the chat writer knew the chat by its old name)', async () => {
    const renamed = 'cbook-rename';
    const book = new ContactBook({ table: counted.table, accountId: renamed, logger: silentLogger });
    const eve = '15550920003@s.whatsapp.net';
    // The session's chat writer: the one of the same table.
    const chats = chatWriterOf(counted.table);
    const text = (messageId: string, timestamp: number) => ({
      messageId,
      from: eve,
      chatId: eve,
      timestamp,
      type: 'text' as const,
      fromMe: false,
      text: 'hi',
    });
    await chats.putMessageIfAbsent(renamed, text('E1', 1_000), undefined, { at: 1_000, unread: 1, name: 'Eve' });
    await book.learn([{ id: eve, name: 'Eve (neighbour)' }]);
    await chats.putMessageIfAbsent(renamed, text('E2', 2_000), undefined, { at: 2_000, unread: 1 });
    expect(await findChat(t.table, renamed, eve)).toMatchObject({ name: 'Eve (neighbour)', unreadCount: 2, lastMessageTime: 2_000 });
  });

  it('a push name repeated with every message is written once', async () => {
    const book = new ContactBook({ table: counted.table, accountId, logger: silentLogger });
    const bea = '15550920002@s.whatsapp.net';
    const before = writes();
    await book.learn([{ id: bea, notify: 'Bea' }]);
    const after = writes();
    expect(after).toBeGreaterThan(before);
    for (let n = 0; n < 5; n++) await book.learn([{ id: bea, notify: 'Bea' }]);
    expect(writes()).toBe(after);
  });

  it('keys a LID contact by its number when Baileys gives it; groups and broadcasts are no contacts', async () => {
    const book = new ContactBook({ table: t.table, accountId, logger: silentLogger });
    await book.learn([
      { id: '98765432101234@lid', phoneNumber: '15550920003@s.whatsapp.net', notify: 'Cy' },
      { id: '120363000000000001@g.us', name: 'A group' },
      { id: 'status@broadcast', notify: 'x' },
    ]);
    expect(await findContact(t.table, accountId, '15550920003@s.whatsapp.net')).toEqual({
      jid: '15550920003@s.whatsapp.net',
      phone: '15550920003',
      lid: '98765432101234@lid',
      pushName: 'Cy',
    });
    expect(await findContact(t.table, accountId, '120363000000000001@g.us')).toBeUndefined();
  });
});
