/**
 * `npm run bench:sandbox [clients] [messagesPerClient] [workers]` (or SANDBOX_BENCH_CLIENTS,
 * SANDBOX_BENCH_MESSAGES, SANDBOX_BENCH_WORKERS): starts the sandbox in a child process of its
 * own, links N unmodified Baileys clients (default 200, each on its own number, spread over
 * worker processes, see bench/sandbox-clients.ts), pairs them up and has every client send M
 * texts (default 20) to its partner. Prints connected devices, routed messages per second, the
 * sandbox's CPU time per message, and the sandbox process's RSS per device.
 * SANDBOX_BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the sandbox.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { SandboxDescriptor } from '../sandbox/index.js';
import type { FromWorker, ToWorker } from './sandbox-clients.js';

const clientsWanted = Number(process.argv[2] ?? process.env.SANDBOX_BENCH_CLIENTS ?? 200);
const messagesPerClient = Number(process.argv[3] ?? process.env.SANDBOX_BENCH_MESSAGES ?? 20);
const workerCount = Number(process.argv[4] ?? process.env.SANDBOX_BENCH_WORKERS ?? Math.max(1, Math.ceil(clientsWanted / 25)));
if (clientsWanted < 2 || clientsWanted % 2 || workerCount < 1) throw new Error('clients must be an even number >= 2');

interface Health {
  online: number;
  rssBytes: number;
  cpuMs: number;
}

async function startSandboxProcess(): Promise<{ descriptor: SandboxDescriptor; child: ChildProcess }> {
  // One process (not the tsx CLI, which forks): its RSS and CPU are the sandbox's alone.
  const profile = process.env.SANDBOX_BENCH_CPU_PROF;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', 'sandbox/cli.ts'], {
    env: { ...process.env, SANDBOX_IN_MEMORY: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  return { descriptor: JSON.parse(firstLine) as SandboxDescriptor, child };
}

const health = async (descriptor: SandboxDescriptor): Promise<Health> =>
  (await (await fetch(`${descriptor.controlUrl}/health`)).json()) as Health;

interface Worker {
  proc: ChildProcess;
  received: number;
  waiters: { type: FromWorker['type']; resolve: () => void }[];
}

const closes = new Map<number, number>();

function startWorker(): Worker {
  const worker: Worker = {
    proc: fork(new URL('./sandbox-clients.ts', import.meta.url).pathname, [], {
      // Node 22 keeps AsyncLocalStorage in the async context frame only with this flag; without
      // it every promise costs O(sockets) (Baileys has one store per socket).
      execArgv: ['--experimental-async-context-frame', '--import', 'tsx'],
    }),
    received: 0,
    waiters: [],
  };
  worker.proc.on('message', (msg: FromWorker) => {
    if (msg.type === 'received') worker.received = msg.total;
    if (msg.type === 'closed') closes.set(msg.code, (closes.get(msg.code) ?? 0) + 1);
    if (msg.type === 'error') {
      console.error(`worker error: ${msg.message}`);
      process.exitCode = 1;
    }
    worker.waiters = worker.waiters.filter((w) => {
      if (w.type !== msg.type) return true;
      w.resolve();
      return false;
    });
  });
  return worker;
}

const command = (worker: Worker, msg: ToWorker, until: FromWorker['type']) =>
  new Promise<void>((resolve) => {
    worker.waiters.push({ type: until, resolve });
    worker.proc.send(msg);
  });

async function waitUntil(check: () => boolean, what: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const { descriptor, child } = await startSandboxProcess();
const workers = Array.from({ length: workerCount }, startWorker);
const totalReceived = () => workers.reduce((sum, w) => sum + w.received, 0);
try {
  const empty = await health(descriptor);
  const phones = Array.from({ length: clientsWanted }, (_, i) => String(15_551_000_000 + i));
  const perWorker = Math.ceil(clientsWanted / workerCount / 2) * 2;
  const linkStart = Date.now();
  await Promise.all(
    workers.map((w, i) => command(w, { type: 'link', descriptor, phones: phones.slice(i * perWorker, (i + 1) * perWorker) }, 'linked')),
  );
  const linkSeconds = (Date.now() - linkStart) / 1000;
  const linked = await health(descriptor);
  console.log(
    `linked ${clientsWanted} clients in ${linkSeconds.toFixed(1)} s over ${workerCount} client processes; sandbox reports ${linked.online} connected devices`,
  );

  const warmStart = Date.now();
  await Promise.all(workers.map((w) => command(w, { type: 'send', messagesPerClient: 1, label: 'warm-up' }, 'sent')));
  await waitUntil(() => totalReceived() >= clientsWanted, 'warm-up delivery', 300_000);
  console.log(
    `warm-up (first message of each client: device lists, Signal sessions) took ${((Date.now() - warmStart) / 1000).toFixed(1)} s`,
  );

  const before = await health(descriptor);
  const baseline = totalReceived();
  const expected = clientsWanted * messagesPerClient;
  const start = process.hrtime.bigint();
  await Promise.all(workers.map((w) => command(w, { type: 'send', messagesPerClient, label: 'bench' }, 'sent')));
  await waitUntil(() => totalReceived() - baseline >= expected, 'bench delivery', 600_000);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const after = await health(descriptor);

  const routed = totalReceived() - baseline;
  const cpuSeconds = (after.cpuMs - before.cpuMs) / 1000;
  const perDevice = (after.rssBytes - empty.rssBytes) / Math.max(after.online, 1);
  console.log(`connected devices: ${after.online}; client closes during the run: ${closes.size ? JSON.stringify([...closes]) : 'none'}`);
  console.log(
    `messages routed: ${routed} in ${seconds.toFixed(2)} s = ${(routed / seconds).toFixed(0)} msg/s end to end (the Baileys clients share the machine's cores with the sandbox)`,
  );
  console.log(
    `sandbox CPU: ${cpuSeconds.toFixed(2)} s for ${routed} messages = ${((cpuSeconds * 1000) / routed).toFixed(3)} ms per message, i.e. ~${(routed / cpuSeconds).toFixed(0)} msg/s per CPU core the sandbox gets; it was busy ${((100 * cpuSeconds) / seconds).toFixed(0)}% of one core during the run`,
  );
  console.log(
    `sandbox RSS: ${(after.rssBytes / 1048576).toFixed(1)} MiB with ${after.online} devices (${(empty.rssBytes / 1048576).toFixed(1)} MiB empty) = ${(after.rssBytes / 1024 / Math.max(after.online, 1)).toFixed(0)} KiB per device overall, ${(perDevice / 1024).toFixed(0)} KiB per device above the empty sandbox`,
  );
} finally {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve) => {
          w.proc.once('exit', resolve);
          w.proc.send({ type: 'stop' });
        }),
    ),
  );
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}
