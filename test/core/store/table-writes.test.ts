import { describe, expect, it, onTestFinished } from 'vitest';
import { readSignalKeys, writeSignalKeysOfCollections } from '../../../core/store/auth-state.js';
import { batchGet } from '../../../core/store/batch.js';
import { tableWrites, writeInSharedRequests } from '../../../core/store/table-writes.js';
import { countedTable } from '../../support/counted-table.js';
import { useTestStack } from '../../support/test-stack.js';

const stack = useTestStack();

describe("a table's shared batch writes (table-writes.ts)", () => {
  it('the writes of several writers at once travel in the same requests, each resolved once stored', async () => {
    const { table, counts, close } = countedTable(stack.stack.config);
    onTestFinished(close);
    const records = Array.from({ length: 10 }, (_, i) => tableWrites(table).add({ put: { pk: 'SHARED#a', sk: `REC#${i}`, n: i } }));
    const keys = Array.from({ length: 10 }, (_, i) =>
      writeSignalKeysOfCollections(table, [{ collectionName: `shared-${i}`, writes: [{ type: 'session', id: '1.0', value: `s${i}` }] }]),
    );
    const rows = Array.from({ length: 10 }, (_, i) =>
      writeInSharedRequests(table, [{ put: { pk: 'SHARED#b', sk: `ROW#${i}` } }, { put: { pk: 'SHARED#b', sk: `CHAT#${i}` } }]),
    );
    await Promise.all([...records, ...keys, ...rows]);
    // 40 items from 30 callers in 25-item requests: the first record leaves at once, the others
    // fill one request and a last one follows (each writer on its own requests took 14).
    expect(counts.get('BatchWriteItemCommand')).toBeLessThanOrEqual(4);
    const stored = await batchGet(table, [
      ...Array.from({ length: 10 }, (_, i) => ({ pk: 'SHARED#a', sk: `REC#${i}` })),
      ...Array.from({ length: 10 }, (_, i) => ({ pk: 'SHARED#b', sk: `ROW#${i}` })),
      ...Array.from({ length: 10 }, (_, i) => ({ pk: 'SHARED#b', sk: `CHAT#${i}` })),
    ]);
    expect(stored).toHaveLength(30);
    for (let i = 0; i < 10; i++) expect(await readSignalKeys(table, `shared-${i}`, 'session', ['1.0'])).toEqual({ '1.0': `s${i}` });
  });

  it('writes of one key made before the earlier ones resolved land in the order they were made', async () => {
    const { table, counts, close } = countedTable(stack.stack.config);
    onTestFinished(close);
    const writes = tableWrites(table);
    // Some wait for company, some leave at once, others' writes keep requests out meanwhile:
    // a later write of the key never overtakes an earlier one in another request.
    const all: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      all.push(writes.add({ put: { pk: 'SHARED#o', sk: 'CHAT', v: i } }, i % 4 === 0 ? 50 : 0));
      all.push(writes.add({ put: { pk: 'SHARED#o', sk: `OTHER#${i}`, v: i } }));
      if (i % 10 === 9) await all.at(-1);
    }
    await Promise.all(all);
    const [stored] = await batchGet(table, [{ pk: 'SHARED#o', sk: 'CHAT' }]);
    expect(stored?.v).toBe(39);
    expect(counts.get('BatchWriteItemCommand')).toBeGreaterThan(1);
  });

  it("a caller's key written twice keeps its last write; a write that fills requests goes on its own", async () => {
    const { table, counts, close } = countedTable(stack.stack.config);
    onTestFinished(close);
    await writeInSharedRequests(table, [
      { put: { pk: 'SHARED#c', sk: 'K', v: 'first' } },
      { put: { pk: 'SHARED#c', sk: 'K', v: 'last' } },
      { put: { pk: 'SHARED#c', sk: 'GONE' } },
      { delete: { pk: 'SHARED#c', sk: 'GONE' } },
    ]);
    expect(
      await batchGet(table, [
        { pk: 'SHARED#c', sk: 'K' },
        { pk: 'SHARED#c', sk: 'GONE' },
      ]),
    ).toEqual([{ pk: 'SHARED#c', sk: 'K', v: 'last' }]);

    counts.clear();
    // 60 pre-keys of a linking account, with a lone record beside them.
    const preKeys = writeSignalKeysOfCollections(table, [
      { collectionName: 'linking', writes: Array.from({ length: 60 }, (_, i) => ({ type: 'pre-key', id: String(i), value: `k${i}` })) },
    ]);
    const record = tableWrites(table).add({ put: { pk: 'SHARED#d', sk: 'REC' } });
    await Promise.all([preKeys, record]);
    // 3 requests of 25, 25 and 10 keys, and the record's own.
    expect(counts.get('BatchWriteItemCommand')).toBe(4);
    const read = await readSignalKeys(
      table,
      'linking',
      'pre-key',
      Array.from({ length: 60 }, (_, i) => String(i)),
    );
    expect(Object.keys(read)).toHaveLength(60);
  });
});
