import { describe, expect, it, onTestFinished } from 'vitest';
import { chatWriterOf } from '../../../core/store/chat-writer.js';
import { findChat, updateChat } from '../../../core/store/chats.js';
import { findMessageRecord } from '../../../core/store/messages.js';
import { tableOf } from '../../../core/store/table.js';
import type { Message } from '../../../core/schemas/message.js';
import { countedTable } from '../../support/counted-table.js';
import { useTestStack } from '../../support/test-stack.js';

const stack = useTestStack();

const ALICE = '15550002222@s.whatsapp.net';

const message = (messageId: string, text = 'hi', chatId = ALICE, timestamp = 1_767_000_000_000): Message => ({
  messageId,
  from: chatId,
  chatId,
  timestamp,
  type: 'text',
  fromMe: false,
  text,
});

describe('new message rows and their chats, written together (chat-writer.ts)', () => {
  it('stores absent rows with their marks, leaves a stored row as it was, and answers which it stored', async () => {
    const table = tableOf(stack.stack.config, stack.stack.clients);
    const writer = chatWriterOf(table);
    expect(await writer.putMessageIfAbsent('acct-a', message('M1', 'first'), { eventHeldByRecord: true })).toBe(true);
    expect(await writer.putMessageIfAbsent('acct-a', message('M1', 'second'), { eventPending: true })).toBe(false);
    expect(await findMessageRecord(table, 'acct-a', 'M1')).toEqual({ message: message('M1', 'first'), marks: { eventHeldByRecord: true } });
    // The same message id of another account is another row.
    expect(await writer.putMessageIfAbsent('acct-b', message('M1'))).toBe(true);
  });

  it('the same id twice at once is stored once; many rows and their chats share requests', async () => {
    const { table, counts, close } = countedTable(stack.stack.config);
    onTestFinished(close);
    const writer = chatWriterOf(table);
    const ids = Array.from({ length: 60 }, (_, i) => `B${i}`);
    const chatOf = (i: number) => `1555000300${i % 3}@s.whatsapp.net`;
    const answers = await Promise.all([
      ...ids.map((id, i) =>
        writer.putMessageIfAbsent(`acct-${i % 3}`, message(id, 'hi', chatOf(i), 1000 + i), undefined, { at: 1000 + i, unread: 1 }),
      ),
      writer.putMessageIfAbsent('acct-0', message('B0', 'again', chatOf(0), 5000), undefined, { at: 5000, unread: 1 }),
    ]);
    expect(answers.filter(Boolean)).toHaveLength(60);
    expect(answers.at(-1)).toBe(false);
    expect((await findMessageRecord(table, 'acct-0', 'B0'))?.message.text).toBe('hi');
    // Each chat counts its 20 new rows, not the redelivery, whose time still moves it forward.
    for (let a = 0; a < 3; a++) {
      expect(await findChat(table, `acct-${a}`, chatOf(a))).toEqual({
        chatId: chatOf(a),
        name: `+1555000300${a}`,
        unreadCount: 20,
        lastMessageTime: a === 0 ? 5000 : 1000 + 57 + a,
      });
    }
    // A conditional PutItem and a chat UpdateItem each would be 122 requests; a batch is one read
    // and one or two writes for up to 25 rows with their chats. Only the items that went alone
    // (while no request was out, or the others' chats were) are PutItems, and a chat not known
    // yet an UpdateItem (at most one per chat: then it is known).
    const requests = [...counts.values()].reduce((sum, n) => sum + n, 0);
    expect(counts.get('PutItemCommand') ?? 0).toBeLessThanOrEqual(8);
    expect(counts.get('UpdateItemCommand') ?? 0).toBeLessThanOrEqual(3);
    expect(counts.get('BatchGetItemCommand')).toBeGreaterThan(0);
    expect(requests).toBeLessThan(25);
  });

  it('changes a known chat with no read and no write when nothing changes; a change without a time creates no chat', async () => {
    const { table, counts, close } = countedTable(stack.stack.config);
    onTestFinished(close);
    const writer = chatWriterOf(table);
    await writer.putMessageIfAbsent('acct-k', message('K1', 'hi', ALICE, 100), undefined, { at: 100, unread: 1, name: 'Alice' });
    counts.clear();
    // Known now: a read receipt, a redelivery and the same name again cost one write (in the
    // table's shared requests), then nothing.
    await writer.change('acct-k', ALICE, { unread: -1 });
    await writer.change('acct-k', ALICE, { at: 50, name: 'Alice' });
    expect([...counts]).toEqual([['BatchWriteItemCommand', 1]]);
    expect(await findChat(table, 'acct-k', ALICE)).toEqual({ chatId: ALICE, name: 'Alice', unreadCount: 0, lastMessageTime: 100 });
    const nobody = '15550009999@s.whatsapp.net';
    await writer.change('acct-k', nobody, { name: 'Nobody' });
    await writer.change('acct-k', nobody, { unread: -2 });
    expect(await findChat(table, 'acct-k', nobody)).toBeUndefined();
  });

  it('a lone row with its chat known: written beside each other, a redelivery takes its unread back', async () => {
    const table = tableOf(stack.stack.config, stack.stack.clients);
    const writer = chatWriterOf(table);
    await writer.putMessageIfAbsent('acct-l', message('L1', 'hi', ALICE, 100), undefined, { at: 100, unread: 1 });
    expect(await writer.putMessageIfAbsent('acct-l', message('L2', 'hi', ALICE, 200), undefined, { at: 200, unread: 1 })).toBe(true);
    expect(await writer.putMessageIfAbsent('acct-l', message('L1', 'again', ALICE, 100), undefined, { at: 100, unread: 1 })).toBe(false);
    expect(await findChat(table, 'acct-l', ALICE)).toEqual({ chatId: ALICE, name: '+15550002222', unreadCount: 2, lastMessageTime: 200 });
    expect((await findMessageRecord(table, 'acct-l', 'L1'))?.message.text).toBe('hi');
  });

  it('a held chat: the row is answered first, the chat written by the time the hold resolves, in order with later changes', async () => {
    const table = tableOf(stack.stack.config, stack.stack.clients);
    const writer = chatWriterOf(table);
    await writer.putMessageIfAbsent('acct-h', message('H0', 'hi', ALICE, 100), undefined, { at: 100, unread: 1 });
    const holds: Promise<void>[] = [];
    const hold = (chatWritten: Promise<void>) => {
      holds.push(chatWritten);
    };
    // Held rows, a redelivery (its unread taken back) and plain changes, one after another.
    for (let i = 1; i <= 12; i++) {
      expect(
        await writer.putMessageIfAbsent('acct-h', message(`H${i}`, 'hi', ALICE, 100 + i), undefined, { at: 100 + i, unread: 1 }, hold),
      ).toBe(true);
      if (i % 4 === 0) await writer.change('acct-h', ALICE, { unread: -1 });
    }
    expect(await writer.putMessageIfAbsent('acct-h', message('H3', 'again', ALICE, 103), undefined, { at: 103, unread: 1 }, hold)).toBe(
      false,
    );
    // Each held row handed its chat's write to the caller.
    expect(holds).toHaveLength(13);
    await Promise.all(holds);
    expect(await findChat(table, 'acct-h', ALICE)).toEqual({
      chatId: ALICE,
      name: '+15550002222',
      unreadCount: 13 - 3,
      lastMessageTime: 112,
    });
    expect((await findMessageRecord(table, 'acct-h', 'H3'))?.message.text).toBe('hi');
  });

  it("reads an account's chats again after forgetAccount (another connector may have written them)", async () => {
    const table = tableOf(stack.stack.config, stack.stack.clients);
    const writer = chatWriterOf(table);
    await writer.putMessageIfAbsent('acct-f', message('F1'), undefined, { at: 100, unread: 1 });
    // Written elsewhere meanwhile: this writer's idea of the chat is stale.
    await updateChat(table, 'acct-f', ALICE, { at: 200, unread: 5 });
    writer.forgetAccount('acct-f');
    await writer.putMessageIfAbsent('acct-f', message('F2', 'hi', ALICE, 300), undefined, { at: 300, unread: 1 });
    expect(await findChat(table, 'acct-f', ALICE)).toMatchObject({ unreadCount: 7, lastMessageTime: 300 });
  });
});
