/**
 * `npx tsx bench/heap-snapshot-top.ts <file.heapsnapshot> [rows]`: what a V8 heap snapshot
 * (`BENCH_HEAP_SNAPSHOT` of bench:connector) holds, by self size, as markdown tables: the total
 * (V8 collects before it writes a snapshot, so this is the live heap, unlike RSS), the node types
 * (code, strings, objects, ...) and the top `rows` (default 15) constructors and string kinds.
 * Per account, divide by the accounts the connector ran. With `--retainers` (a third argument),
 * also what holds the largest kinds: for each, the first retainer found of each node, as
 * `constructor.property`, by the self size it holds.
 */
import { closeSync, openSync, readSync } from 'node:fs';

interface HeapSnapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] };
  };
  nodes: Float64Array;
  /** Empty unless asked for. */
  edges: Float64Array;
  strings: string[];
}

const [file, rowsArg, retainersArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/heap-snapshot-top.ts <file.heapsnapshot> [rows] [--retainers]');
  process.exit(2);
}
const rows = Number(rowsArg ?? 15);
const withRetainers = retainersArg === '--retainers';
const heap = readSnapshot(file, withRetainers);
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
  add(byName, kindOf(at), size);
}

/**
 * A node's row in the tables: objects, closures and natives by constructor; arrays, hidden and
 * number nodes by what they hold ("(object elements)", "heap number"); strings by their kind
 * (named by their text, every one would be a row).
 */
function kindOf(at: number): string {
  const type = types[heap.nodes[at + typeAt]!] ?? 'unknown';
  const named = type === 'object' || type === 'closure' || type === 'native' || type === 'array' || type === 'hidden' || type === 'number';
  const name = (named && heap.strings[heap.nodes[at + nameAt]!]) || `(${type})`;
  return type === 'closure' ? `${name}()` : name;
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
if (withRetainers) retainers(6, rows);

/** For the `kinds` largest kinds, who holds them: each node's first retainer (weak edges aside). */
function retainers(kinds: number, limit: number) {
  const { edge_fields: edgeFields, edge_types: edgeTypes } = heap.snapshot.meta;
  const [edgeTypeAt, edgeNameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((field) => edgeFields.indexOf(field)) as [
    number,
    number,
    number,
  ];
  const edgeCountAt = fields.indexOf('edge_count');
  const nodeCount = heap.nodes.length / fields.length;
  const parent = new Int32Array(nodeCount).fill(-1);
  const via = new Int32Array(nodeCount).fill(-1); // the edge that made the parent, as its index
  let edge = 0;
  for (let node = 0; node < nodeCount; node++) {
    const count = heap.nodes[node * fields.length + edgeCountAt]!;
    for (let e = 0; e < count; e++, edge += edgeFields.length) {
      const edgeType = edgeTypes[0][heap.edges[edge + edgeTypeAt]!];
      if (edgeType === 'weak' || edgeType === 'shortcut') continue;
      const target = heap.edges[edge + toAt]! / fields.length;
      if (parent[target] === -1) {
        parent[target] = node;
        via[target] = edge;
      }
    }
  }
  const edgeName = (at: number) => {
    const edgeType = edgeTypes[0][heap.edges[at + edgeTypeAt]!];
    return edgeType === 'element' || edgeType === 'hidden' ? '[]' : (heap.strings[heap.edges[at + edgeNameAt]!] ?? '?');
  };
  const top = [...byName]
    .sort(([, a], [, b]) => b.size - a.size)
    .slice(0, kinds)
    .map(([kind]) => kind);
  for (const kind of top) {
    const holders = new Map<string, { size: number; count: number }>();
    for (let node = 0; node < nodeCount; node++) {
      const at = node * fields.length;
      if (kindOf(at) !== kind) continue;
      const holder = parent[node]! >= 0 ? `${kindOf(parent[node]! * fields.length)}.${edgeName(via[node]!)}` : '(root)';
      add(holders, holder, heap.nodes[at + sizeAt]!);
    }
    table(`${kind}: held by`, holders, limit);
  }
}

/**
 * The snapshot's meta, nodes and strings, read as a stream: the snapshot of a connector with a
 * thousand accounts is larger than the longest string V8 makes, so JSON.parse of the whole file
 * cannot read it. The edges are read only when asked for; the rest is skipped.
 */
function readSnapshot(path: string, withEdges: boolean): HeapSnapshot {
  const NODES = Buffer.from('"nodes":[');
  const EDGES = Buffer.from('"edges":[');
  const STRINGS = Buffer.from('"strings":[');
  const [QUOTE, BACKSLASH, CLOSE, ZERO, NINE] = [0x22, 0x5c, 0x5d, 0x30, 0x39];
  let phase: 'header' | 'numbers' | 'seek' | 'strings' | 'done' = 'header';
  let pending = Buffer.alloc(0); // header text, or the tail kept while seeking a marker
  let meta: HeapSnapshot['snapshot']['meta'] | undefined;
  // The number arrays read: the nodes, then the edges when asked for.
  const sections = { nodes: { data: new Float64Array(1 << 20), count: 0 }, edges: { data: new Float64Array(1 << 20), count: 0 } };
  let numbers = sections.nodes;
  let seeking = withEdges ? EDGES : STRINGS; // the marker after the nodes
  let value = -1; // the number being read, -1 between numbers
  const strings: string[] = [];
  let stringParts: Buffer[] | undefined; // the raw JSON of the string being read
  let escaped = false;

  const consume = (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length && phase !== 'done') {
      if (phase === 'header' || phase === 'seek') {
        const marker = phase === 'header' ? NODES : seeking;
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
        if (marker === EDGES) {
          numbers = sections.edges;
          seeking = STRINGS;
        }
        phase = marker === STRINGS ? 'strings' : 'numbers';
        // What follows the marker in `text`, as a chunk of its own.
        chunk = text.subarray(found + marker.length);
        pending = Buffer.alloc(0);
        at = 0;
        continue;
      }
      const byte = chunk[at]!;
      if (phase === 'numbers') {
        if (byte >= ZERO && byte <= NINE) value = (value < 0 ? 0 : value * 10) + byte - ZERO;
        else {
          if (value >= 0) {
            if (numbers.count === numbers.data.length) {
              const grown = new Float64Array(numbers.data.length * 2);
              grown.set(numbers.data);
              numbers.data = grown;
            }
            numbers.data[numbers.count++] = value;
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
  const { nodes, edges } = sections;
  return { snapshot: { meta }, nodes: nodes.data.subarray(0, nodes.count), edges: edges.data.subarray(0, edges.count), strings };
}
