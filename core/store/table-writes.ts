import { createBatcher, type Batcher } from '../batcher.js';
import { keyText } from '../keys.js';
import { BATCH_WRITE_LIMIT, batchWrite, lastWriteOfEachKey, type WriteRequest } from './batch.js';
import { perTable, type Table } from './table.js';

/**
 * The unconditional puts and deletes of one table from every part of a process (write-ahead
 * records and their deletions, signal keys, new message rows and their chats, the webhook
 * delivery log), in shared BatchWriteItem requests.
 *
 *   await tableWrites(table).add({ put: item });            // leaves now (a slot is free)
 *   await tableWrites(table).add({ delete: key }, 50);      // waits up to 50 ms for company
 *   await writeInSharedRequests(table, requests);           // several writes of one caller
 *
 * Under a burst each request carries up to 25 of them. At a steady rate most requests would
 * carry one, so the writes that are in no hurry wait a little and leave with the next pressing
 * one: a message's write-ahead record and the previous message's deletion travel together. Each
 * inbound message writes four items (its record, the Signal session its decryption moved, its
 * row and chat, the record's deletion), from three writers: each with requests of its own, a
 * burst paid 0.52 BatchWriteItem per message (docs/benchmarks.md).
 *
 * Several requests may be out at once, but two writes of one key never are: a write whose key
 * is out waits for that request, and writes of one key that leave together keep the last one
 * (batch.ts). So a key may be written again before its earlier write resolved (a chat whose put
 * waits for company while the chat's next message moves it again), and the last write lands
 * last. One per table, shared by every account of the process.
 */
export type TableWrites = Batcher<WriteRequest, void>;

const REQUESTS_IN_FLIGHT = 8;

export const tableWrites: (table: Table) => TableWrites = perTable((table) =>
  createBatcher({
    maxBatch: BATCH_WRITE_LIMIT,
    lingerMs: 0,
    maxInFlight: REQUESTS_IN_FLIGHT,
    orderKeyOf: (request) => keyText('put' in request ? request.put : request.delete),
    async send(requests) {
      await batchWrite(table, requests);
      return requests.map(() => undefined);
    },
  }),
);

/**
 * Several writes of one caller (a key written twice keeps its last write), resolved once all
 * are stored. A few travel in the shared requests; enough to fill requests of their own (the
 * pre-keys of an account linked) go on their own, beside the shared ones. On a failure it
 * rejects only after every write settled: the caller may then write the same keys again.
 */
export async function writeInSharedRequests(table: Table, requests: WriteRequest[]): Promise<void> {
  const writes = lastWriteOfEachKey(requests);
  if (writes.length >= BATCH_WRITE_LIMIT) return batchWrite(table, writes);
  const shared = tableWrites(table);
  const outcomes = await Promise.allSettled(writes.map((write) => shared.add(write)));
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}
