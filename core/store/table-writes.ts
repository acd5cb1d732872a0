import { createBatcher, type Batcher } from '../batcher.js';
import { BATCH_WRITE_LIMIT, batchWrite, type WriteRequest } from './batch.js';
import { perTable, type Table } from './table.js';

/**
 * The unconditional puts and deletes of one table from every part of a process (write-ahead
 * records, their deletions, the webhook delivery log), in shared BatchWriteItem requests.
 *
 *   await tableWrites(table).add({ put: item });            // leaves now (a slot is free)
 *   await tableWrites(table).add({ delete: key }, 50);      // waits up to 50 ms for company
 *
 * Under a burst each request carries up to 25 of them. At a steady rate most requests would
 * carry one, so the writes that are in no hurry wait a little and leave with the next pressing
 * one: a message's write-ahead record and the previous message's deletion travel together.
 *
 * Several requests may be out at once, so two writes of the same key must not be in flight
 * together; callers write a key again only after the earlier write resolved. The signal keys,
 * whose later writes must never land first, have their own ordered writer (dynamo-auth-state.ts).
 * One per table, shared by every account of the process.
 */
export type TableWrites = Batcher<WriteRequest, void>;

const REQUESTS_IN_FLIGHT = 4;

export const tableWrites: (table: Table) => TableWrites = perTable((table) =>
  createBatcher({
    maxBatch: BATCH_WRITE_LIMIT,
    lingerMs: 0,
    maxInFlight: REQUESTS_IN_FLIGHT,
    async send(requests) {
      await batchWrite(table, requests);
      return requests.map(() => undefined);
    },
  }),
);
