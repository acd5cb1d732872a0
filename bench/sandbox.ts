/**
 * `npm run bench:sandbox [clients] [messagesPerClient]` (or SANDBOX_BENCH_CLIENTS /
 * SANDBOX_BENCH_MESSAGES): starts the sandbox in a child process, links N unmodified Baileys
 * clients (default 200, each on its own number), pairs them up and has every client send M
 * texts to its partner. Prints connected devices, routed messages per second, the sandbox's
 * CPU time per message, and the sandbox process's RSS per device.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { makeWASocket, type WASocket } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import type { SandboxDescriptor } from '../sandbox/index.js';
import { sandboxSocketOptions } from '../sandbox/client.js';
import { memoryAuthState } from '../test/sandbox/support/memory-auth.js';

const clientsWanted = Number(process.argv[2] ?? process.env.SANDBOX_BENCH_CLIENTS ?? 200);
const messagesPerClient = Number(process.argv[3] ?? process.env.SANDBOX_BENCH_MESSAGES ?? 20);
const LINK_CONCURRENCY = 10;
const silent = pino({ level: 'silent' });

interface Health {
  online: number;
  rssBytes: number;
  cpuMs: number;
}

async function startSandboxProcess(): Promise<{ descriptor: SandboxDescriptor; stop: () => Promise<void> }> {
  // One process (not the tsx CLI, which forks): its RSS and CPU are the sandbox's alone.
  // SANDBOX_BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the sandbox.
  const profile = process.env.SANDBOX_BENCH_CPU_PROF;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', 'sandbox/cli.ts'], {
    env: { ...process.env, SANDBOX_IN_MEMORY: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  const descriptor = JSON.parse(firstLine) as SandboxDescriptor;
  return {
    descriptor,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function control<T>(descriptor: SandboxDescriptor, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${descriptor.controlUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

interface BenchClient {
  phone: string;
  sock: WASocket;
  received: number;
}

/** Close codes of clients after they were linked: a healthy run has none. */
const unexpectedCloses = new Map<number, number>();

/** Links one client: QR, scan, 515 restart, open. Resolves with the open socket. */
async function link(descriptor: SandboxDescriptor, phone: string, onMessage: () => void): Promise<BenchClient> {
  await control(descriptor, '/phones', { phone });
  const auth = memoryAuthState();
  const client = { phone, received: 0 } as BenchClient;
  let linked = false;
  await new Promise<void>((resolve, reject) => {
    const open = () => {
      const sock = makeWASocket({ ...sandboxSocketOptions(descriptor), auth, logger: silent, markOnlineOnConnect: false });
      client.sock = sock;
      sock.ev.on('creds.update', (update) => Object.assign(auth.creds, update));
      sock.ev.on('messages.upsert', ({ messages }) => {
        for (const m of messages) {
          if (!m.key.fromMe && (m.message?.conversation || m.message?.extendedTextMessage)) {
            client.received++;
            onMessage();
          }
        }
      });
      sock.ev.on('connection.update', ({ connection, qr, lastDisconnect }) => {
        if (qr) control(descriptor, '/scan', { phone, qr }).catch(reject);
        if (connection === 'open') {
          linked = true;
          resolve();
        }
        if (connection === 'close') {
          const code = (lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode ?? 0;
          if (code === 515) open();
          else if (!linked) reject(new Error(`client ${phone} closed with ${code}`));
          else if (!stopping) unexpectedCloses.set(code, (unexpectedCloses.get(code) ?? 0) + 1);
        }
      });
    };
    open();
  });
  return client;
}

async function waitUntil(check: () => boolean, what: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let stopping = false;
const sandbox = await startSandboxProcess();
const { descriptor } = sandbox;
let totalReceived = 0;
const clients: BenchClient[] = [];
try {
  const baseline0 = await control<Health>(descriptor, '/health');
  const linkStart = Date.now();
  const phones = Array.from({ length: clientsWanted }, (_, i) => String(15_551_000_000 + i));
  for (let i = 0; i < phones.length; i += LINK_CONCURRENCY) {
    const batch = await Promise.all(phones.slice(i, i + LINK_CONCURRENCY).map((p) => link(descriptor, p, () => totalReceived++)));
    clients.push(...batch);
  }
  const linkMs = Date.now() - linkStart;
  const afterLink = await control<Health>(descriptor, '/health');
  console.log(`linked ${clients.length} clients in ${(linkMs / 1000).toFixed(1)} s (${(linkMs / clients.length).toFixed(0)} ms each); sandbox reports ${afterLink.online} connected devices`);

  const partner = (i: number) => clients[i % 2 === 0 ? (i + 1) % clients.length : i - 1]!;
  const jidOf = (c: BenchClient) => `${c.phone}@s.whatsapp.net`;

  // Warm-up: one message per client establishes every Signal session and device list.
  await Promise.all(clients.map((c, i) => c.sock.sendMessage(jidOf(partner(i)), { text: 'warm-up' })));
  const progress = setInterval(() => {
    void control<Health>(descriptor, '/health').then((h) =>
      console.log(`  ... received ${totalReceived}, sandbox online ${h.online}, unexpected closes ${JSON.stringify([...unexpectedCloses])}`),
    );
  }, 10_000);
  progress.unref();
  await waitUntil(() => totalReceived >= clients.length, 'warm-up delivery', 120_000);

  const before = await control<Health>(descriptor, '/health');
  const baseline = totalReceived;
  const expected = clients.length * messagesPerClient;
  const start = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (c, i) => {
      for (let n = 0; n < messagesPerClient; n++) await c.sock.sendMessage(jidOf(partner(i)), { text: `bench ${n}` });
    }),
  );
  await waitUntil(() => totalReceived - baseline >= expected, 'bench delivery', 300_000);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const after = await control<Health>(descriptor, '/health');

  const routed = totalReceived - baseline;
  const sandboxCpuSeconds = (after.cpuMs - before.cpuMs) / 1000;
  clearInterval(progress);
  console.log(`connected devices: ${after.online}; unexpected client closes: ${unexpectedCloses.size ? JSON.stringify([...unexpectedCloses]) : 'none'}`);
  console.log(`messages routed: ${routed} in ${seconds.toFixed(2)} s = ${(routed / seconds).toFixed(0)} msg/s (end to end, limited by the Baileys clients sharing this machine)`);
  console.log(
    `sandbox CPU: ${sandboxCpuSeconds.toFixed(2)} s for ${routed} messages = ${((sandboxCpuSeconds * 1000) / routed).toFixed(3)} ms/message, capacity ~${(routed / sandboxCpuSeconds).toFixed(0)} msg/s per sandbox CPU core`,
  );
  const perDevice = (after.rssBytes - baseline0.rssBytes) / Math.max(after.online, 1);
  console.log(
    `sandbox RSS: ${(after.rssBytes / 1048576).toFixed(1)} MiB (${(baseline0.rssBytes / 1048576).toFixed(1)} MiB at start with no devices) = ${(after.rssBytes / 1024 / Math.max(after.online, 1)).toFixed(0)} KiB per device overall, ${(perDevice / 1024).toFixed(0)} KiB per device above the empty sandbox`,
  );
} finally {
  stopping = true;
  await Promise.all(clients.map((c) => c.sock.end(undefined)));
  await sandbox.stop();
}
