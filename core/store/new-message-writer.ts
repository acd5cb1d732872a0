import { createBatcher, type Batcher } from '../batcher.js';
import { messageKey } from '../keys.js';
import { KeyedSerial } from '../serial.js';
import type { Message } from '../schemas/message.js';
import { BATCH_WRITE_LIMIT, batchGet, batchWrite } from './batch.js';
import { messageItem, putMessageIfAbsent, type MessageMarks } from './messages.js';
import type { Table } from './table.js';

/**
 * New message rows of every account of a process, stored "if absent" in shared requests: a
 * BatchGetItem (strongly consistent, keys only) finds which rows are there already, and one
 * BatchWriteItem stores the others. Two requests carry up to 25 messages, where a conditional
 * PutItem each cost a request per message: under a burst, the one cost of the inbound path that
 * grew with the message count. A row that travels alone is one conditional PutItem.
 *
 *   const stored = await writer.putIfAbsent(accountId, message, marks);   // false: a redelivery
 *
 * The read and the write are not one atomic step, so this relies on what makes this process
 * the only writer of a new row: the account's lease (one connector handles its messages), and
 * here, one write per key at a time: a second message with the same id waits for the first
 * (and then finds it). Rows that other writes touch afterwards (statuses, reactions) are
 * written by conditional updates, never by this writer.
 */
export interface NewMessageWriter {
  /** Stores the row unless the message id is stored already; false when it was (nothing changed). */
  putIfAbsent(accountId: string, message: Message, marks?: MessageMarks): Promise<boolean>;
}

interface NewRow {
  accountId: string;
  message: Message;
  marks: MessageMarks | undefined;
}

const REQUESTS_IN_FLIGHT = 4;

const rowKeyText = (accountId: string, messageId: string) => {
  const key = messageKey(accountId, messageId);
  return `${key.pk}\u0000${key.sk}`;
};

export function createNewMessageWriter(table: Table): NewMessageWriter {
  const rows: Batcher<NewRow, boolean> = createBatcher({
    maxBatch: BATCH_WRITE_LIMIT,
    lingerMs: 0,
    maxInFlight: REQUESTS_IN_FLIGHT,
    async send(batch) {
      // A lone row (a quiet moment) is one conditional PutItem: one request instead of two.
      const [only] = batch;
      if (only && batch.length === 1) return [await putMessageIfAbsent(table, only.accountId, only.message, only.marks)];
      const found = await batchGet(
        table,
        batch.map((row) => messageKey(row.accountId, row.message.messageId)),
        'pk, sk',
      );
      const present = new Set(found.map((item) => `${String(item.pk)}\u0000${String(item.sk)}`));
      const absent = new Set(batch.filter((row) => !present.has(rowKeyText(row.accountId, row.message.messageId))));
      if (absent.size > 0)
        await batchWrite(
          table,
          [...absent].map((row) => ({ put: messageItem(row.accountId, row.message, row.marks) })),
        );
      return batch.map((row) => absent.has(row));
    },
  });
  /** A later write of the same key waits for the one under way (and then finds its row). */
  const perKey = new KeyedSerial();

  return {
    putIfAbsent: (accountId, message, marks) =>
      perKey.run(rowKeyText(accountId, message.messageId), () => rows.add({ accountId, message, marks })),
  };
}
