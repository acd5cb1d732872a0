/**
 * `npx tsx bench/heap-snapshot-top.ts <file.heapsnapshot> [rows]`: what a V8 heap snapshot
 * (`BENCH_HEAP_SNAPSHOT` of bench:connector) holds, by self size, as markdown tables: the total
 * (V8 collects before it writes a snapshot, so this is the live heap, unlike RSS), the node types
 * (code, strings, objects, ...) and the top `rows` (default 15) constructors and string kinds.
 * Per account, divide by the accounts the connector ran.
 */
import { readFileSync } from 'node:fs';

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

const [file, rowsArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/heap-snapshot-top.ts <file.heapsnapshot> [rows]');
  process.exit(2);
}
const rows = Number(rowsArg ?? 15);
const heap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot;
const fields = heap.snapshot.meta.node_fields;
const types = heap.snapshot.meta.node_types[0];
const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field)) as [number, number, number];

const byType = new Map<string, { size: number; count: number }>();
const byName = new Map<string, { size: number; count: number }>();
const add = (map: typeof byType, key: string, size: number) => {
  const entry = map.get(key) ?? { size: 0, count: 0 };
  entry.size += size;
  entry.count += 1;
  map.set(key, entry);
};
let total = 0;
for (let at = 0; at < heap.nodes.length; at += fields.length) {
  const type = types[heap.nodes[at + typeAt]!] ?? 'unknown';
  const size = heap.nodes[at + sizeAt]!;
  total += size;
  add(byType, type, size);
  // Strings are named by their text: grouped by kind instead, or every one would be a row.
  const name = type === 'object' || type === 'closure' || type === 'native' ? heap.strings[heap.nodes[at + nameAt]!]! : `(${type})`;
  add(byName, type === 'closure' ? `${name}()` : name, size);
}

const MB = 1024 * 1024;
const table = (title: string, map: typeof byType, limit: number) => {
  console.log(`| ${title} | MB | share | count |\n|---|---|---|---|`);
  for (const [key, { size, count }] of [...map].sort(([, a], [, b]) => b.size - a.size).slice(0, limit)) {
    console.log(
      `| ${key.slice(0, 80).replaceAll('|', '\\|')} | ${(size / MB).toFixed(1)} | ${((size / total) * 100).toFixed(1)}% | ${count} |`,
    );
  }
  console.log();
};
console.log(`live heap in the snapshot: ${(total / MB).toFixed(1)} MB\n`);
table('node type', byType, byType.size);
table('constructor (or kind)', byName, rows);
