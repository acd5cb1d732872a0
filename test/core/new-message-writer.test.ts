import { describe, expect, it, onTestFinished } from 'vitest';
import { findMessageRecord } from '../../core/store/messages.js';
import { createNewMessageWriter } from '../../core/store/new-message-writer.js';
import { tableOf } from '../../core/store/table.js';
import type { Message } from '../../core/schemas/message.js';
import { countedTable } from '../support/counted-table.js';
import { useTestStack } from '../support/test-stack.js';

const stack = useTestStack();

const message = (messageId: string, text = 'hi'): Message => ({
  messageId,
  from: '15550002222@s.whatsapp.net',
  chatId: '15550002222@s.whatsapp.net',
  timestamp: 1_767_000_000_000,
  type: 'text',
  fromMe: false,
  text,
});

describe('new message rows, written together (new-message-writer.ts)', () => {
  it('stores absent rows with their marks, leaves a stored row as it was, and answers which it stored', async () => {
    const table = tableOf(stack.stack.config, stack.stack.clients);
    const writer = createNewMessageWriter(table);
    expect(await writer.putIfAbsent('acct-a', message('M1', 'first'), { eventHeldByRecord: true })).toBe(true);
    expect(await writer.putIfAbsent('acct-a', message('M1', 'second'), { eventPending: true })).toBe(false);
    expect(await findMessageRecord(table, 'acct-a', 'M1')).toEqual({ message: message('M1', 'first'), marks: { eventHeldByRecord: true } });
    // The same message id of another account is another row.
    expect(await writer.putIfAbsent('acct-b', message('M1'))).toBe(true);
  });

  it('the same id twice at once is stored once; many rows at once share requests', async () => {
    const { table, counts, close } = countedTable(stack.stack.config);
    onTestFinished(close);
    const writer = createNewMessageWriter(table);
    const ids = Array.from({ length: 60 }, (_, i) => `B${i}`);
    const answers = await Promise.all([
      ...ids.map((id, i) => writer.putIfAbsent(`acct-${i % 3}`, message(id))),
      writer.putIfAbsent('acct-0', message('B0', 'again')),
    ]);
    expect(answers.filter(Boolean)).toHaveLength(60);
    expect(answers.at(-1)).toBe(false);
    expect((await findMessageRecord(table, 'acct-0', 'B0'))?.message.text).toBe('hi');
    // A conditional PutItem each would be 61 requests; a batch is one read and one write for up to
    // 25, and only the rows that went alone (the first, while no request was out) are PutItems.
    const requests = [...counts.values()].reduce((sum, n) => sum + n, 0);
    expect(counts.get('PutItemCommand') ?? 0).toBeLessThanOrEqual(4);
    expect(counts.get('BatchGetItemCommand')).toBeGreaterThan(0);
    expect(requests).toBeLessThan(20);
  });
});
