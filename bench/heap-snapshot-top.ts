/**
 * `npx tsx bench/heap-snapshot-top.ts <file.heapsnapshot> [rows]`: what a V8 heap snapshot
 * (`BENCH_HEAP_SNAPSHOT` of bench:connector) holds, by self size, as markdown tables: the total
 * (V8 collects before it writes a snapshot, so this is the live heap, unlike RSS), the node types
 * (code, strings, objects, ...) and the top `rows` (default 15) constructors and string kinds.
 * Per account, divide by the accounts the connector ran.
 */
import { closeSync, openSync, readSync } from 'node:fs';

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: Float64Array;
  strings: string[];
}

const [file, rowsArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/heap-snapshot-top.ts <file.heapsnapshot> [rows]');
  process.exit(2);
}
const rows = Number(rowsArg ?? 15);
const heap = readSnapshot(file);
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
  // Arrays, hidden and number nodes are named by what they hold ("(object elements)", "heap number").
  const named = type === 'object' || type === 'closure' || type === 'native' || type === 'array' || type === 'hidden' || type === 'number';
  const name = (named && heap.strings[heap.nodes[at + nameAt]!]) || `(${type})`;
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

/**
 * The snapshot's meta, nodes and strings, read as a stream: the snapshot of a connector with a
 * thousand accounts is larger than the longest string V8 makes, so JSON.parse of the whole file
 * cannot read it. The edges and the rest are skipped.
 */
function readSnapshot(path: string): HeapSnapshot {
  const NODES = Buffer.from('"nodes":[');
  const STRINGS = Buffer.from('"strings":[');
  const [QUOTE, BACKSLASH, CLOSE, ZERO, NINE] = [0x22, 0x5c, 0x5d, 0x30, 0x39];
  let phase: 'header' | 'nodes' | 'seek' | 'strings' | 'done' = 'header';
  let pending = Buffer.alloc(0); // header text, or the tail kept while seeking a marker
  let meta: HeapSnapshot['snapshot']['meta'] | undefined;
  let nodes = new Float64Array(1 << 20);
  let count = 0;
  let value = -1; // the number being read, -1 between numbers
  const strings: string[] = [];
  let stringParts: Buffer[] | undefined; // the raw JSON of the string being read
  let escaped = false;

  const consume = (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length && phase !== 'done') {
      if (phase === 'header' || phase === 'seek') {
        const marker = phase === 'header' ? NODES : STRINGS;
        const text = Buffer.concat([pending, chunk.subarray(at)]);
        const found = text.indexOf(marker);
        if (found < 0) {
          pending = phase === 'header' ? text : text.subarray(text.length - marker.length);
          return;
        }
        if (phase === 'header') {
          const header = text.subarray(0, found).toString('utf8').replace(/,\s*$/, '}');
          meta = (JSON.parse(header) as { snapshot: HeapSnapshot['snapshot'] }).snapshot.meta;
        }
        phase = phase === 'header' ? 'nodes' : 'strings';
        // What follows the marker in `text`, as a chunk of its own.
        chunk = text.subarray(found + marker.length);
        pending = Buffer.alloc(0);
        at = 0;
        continue;
      }
      const byte = chunk[at]!;
      if (phase === 'nodes') {
        if (byte >= ZERO && byte <= NINE) value = (value < 0 ? 0 : value * 10) + byte - ZERO;
        else {
          if (value >= 0) {
            if (count === nodes.length) {
              const grown = new Float64Array(nodes.length * 2);
              grown.set(nodes);
              nodes = grown;
            }
            nodes[count++] = value;
            value = -1;
          }
          if (byte === CLOSE) phase = 'seek';
        }
        at += 1;
        continue;
      }
      // Strings: each one JSON, from its opening quote to its closing one.
      if (!stringParts) {
        if (byte === QUOTE) {
          stringParts = [];
          const end = closingQuote(chunk, at + 1);
          if (end >= 0) {
            strings.push(JSON.parse(chunk.subarray(at, end + 1).toString('utf8')) as string);
            stringParts = undefined;
            at = end + 1;
            continue;
          }
          stringParts.push(chunk.subarray(at));
          return;
        }
        if (byte === CLOSE) phase = 'done';
        at += 1;
        continue;
      }
      const end = closingQuote(chunk, at);
      if (end < 0) {
        stringParts.push(chunk.subarray(at));
        return;
      }
      stringParts.push(chunk.subarray(at, end + 1));
      strings.push(JSON.parse(Buffer.concat(stringParts).toString('utf8')) as string);
      stringParts = undefined;
      at = end + 1;
    }
  };
  // The closing quote of a string from `from` on (escapes may span chunks), or -1.
  const closingQuote = (chunk: Buffer, from: number) => {
    for (let i = from; i < chunk.length; i++) {
      if (escaped) escaped = false;
      else if (chunk[i] === BACKSLASH) escaped = true;
      else if (chunk[i] === QUOTE) return i;
    }
    return -1;
  };

  const fd = openSync(path, 'r');
  try {
    for (;;) {
      // A fresh buffer each time: string parts still point into the previous one.
      const buffer = Buffer.allocUnsafe(16 * 1024 * 1024);
      const read = readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      consume(buffer.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
  // Read through `consume` (TypeScript does not see the assignments in it here).
  const complete = (): boolean => phase === 'done';
  if (!meta || !complete()) throw new Error(`${path}: not a complete heap snapshot`);
  return { snapshot: { meta }, nodes: nodes.subarray(0, count), strings };
}
