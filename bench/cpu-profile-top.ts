/**
 * `npx tsx bench/cpu-profile-top.ts <file.cpuprofile> [fromUs toUs] [rows]`: the self time of a
 * V8 CPU profile (`node --cpu-prof`, `BENCH_CPU_PROF` of bench:connector) by function and by
 * package or project folder, as markdown tables (the top `rows`, default 10).
 *
 * `fromUs toUs` keep the samples of a window on the profile's clock (CLOCK_MONOTONIC, in
 * microseconds): bench:connector prints the window of its throughput step, so start-up,
 * linking and idle time stay out. Self time is per sample, so a process that waits for a core
 * on a busy machine shows more of it than it used: compare shares, not milliseconds.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, fromArg, toArg, rowsArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/cpu-profile-top.ts <file.cpuprofile> [fromUs toUs] [rows]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const from = fromArg ? Number(fromArg) : Number.NEGATIVE_INFINITY;
const to = toArg ? Number(toArg) : Number.POSITIVE_INFINITY;
const rows = Number(rowsArg ?? 10);

const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
/** Microseconds of self time per profile node inside the window. */
const selfTime = new Map<number, number>();
let at = profile.startTime;
profile.samples.forEach((nodeId, index) => {
  at += profile.timeDeltas[index] ?? 0;
  if (at < from || at > to) return;
  // A sample lasts until the next one.
  selfTime.set(nodeId, (selfTime.get(nodeId) ?? 0) + (profile.timeDeltas[index + 1] ?? 0));
});

/** A path relative to node_modules (as `nm:`) or to the checkout. */
const shortUrl = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\//, 'nm:')
    .replace(`${process.cwd()}/`, '');

function packageOf(url: string, functionName: string): string {
  if (!url) return functionName;
  const short = shortUrl(url);
  if (short.startsWith('nm:')) {
    const [scope, name] = short.slice(3).split('/');
    return `nm:${scope?.startsWith('@') ? `${scope}/${name}` : scope}`;
  }
  if (short.startsWith('node:')) return short;
  return short.split('/').slice(0, 2).join('/');
}

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
let busy = 0;
let idle = 0;
for (const [nodeId, micros] of selfTime) {
  const frame = frames.get(nodeId);
  if (!frame) continue;
  if (frame.functionName === '(idle)') {
    idle += micros;
    continue;
  }
  busy += micros;
  const location = frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
  const name = `${frame.functionName || '(anonymous)'}${location}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  const pkg = packageOf(frame.url, frame.functionName);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
}

function table(title: string, totals: Map<string, number>) {
  console.log(`\n| ${title} | self ms | share of busy |\n|---|---|---|`);
  for (const [name, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    console.log(`| \`${name}\` | ${(micros / 1000).toFixed(0)} | ${((100 * micros) / busy).toFixed(1)}% |`);
  }
}

console.log(`busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms in the window`);
table('function', byFunction);
table('package or folder', byPackage);
