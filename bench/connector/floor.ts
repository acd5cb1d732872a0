/**
 * The floor of `bench:connector`: plain Baileys sockets (in-memory auth state, no store, no queue,
 * no webhook) receiving the same traffic as the connector's throughput step, from the same
 * sandbox, in one process of their own (bench/sandbox-clients.ts, tsx and
 * --experimental-async-context-frame as the connector runs). Their CPU per message is what
 * Baileys itself costs (decrypt, receipts, events): the connector's CPU per message divided by it
 * is the gateway's overhead over the physical limit of this design.
 */
import { fork } from 'node:child_process';
import type { SandboxDescriptor } from '../../sandbox/index.js';
import type { SandboxControl } from '../../test/e2e/support/sandbox-control.js';
import { waitFor } from '../../test/support/wait.js';
import type { FromWorker, ToWorker } from '../sandbox-clients.js';
import { cpuSecondsOf, inBatches, sleep } from './measure.js';

export interface FloorOptions {
  descriptor: SandboxDescriptor;
  control: SandboxControl;
  receivers: number;
  messages: number;
  sendConcurrency: number;
  /** Messages per second offered; undefined = one burst. */
  rate?: number;
  /** The sandbox's process: its CPU over the same messages is measured too. */
  sandboxPid: number;
}

export interface FloorResult {
  /** CPU of the Baileys process per message received, in ms. */
  cpuMsPerMessage: number;
  /** Messages per second from the first send to the last one received. */
  rate: number;
  /** The sandbox's CPU per message meanwhile, in ms: the same work as in the connector's step. */
  sandboxCpuMsPerMessage: number;
}

/** Receivers and senders on numbers of their own: the connector's accounts and phones are untouched. */
const RECEIVER_BASE = 15553000000;
const SENDER_BASE = 15554000000;

export async function measureBaileysFloor(options: FloorOptions): Promise<FloorResult> {
  const worker = fork(new URL('../sandbox-clients.ts', import.meta.url).pathname, [], {
    execArgv: ['--experimental-async-context-frame', '--import', 'tsx'],
  });
  let received = 0;
  const waiters: { type: FromWorker['type']; resolve: () => void }[] = [];
  worker.on('message', (msg: FromWorker) => {
    if (msg.type === 'received') received = msg.total;
    if (msg.type === 'error') console.error(`floor worker error: ${msg.message}`);
    for (const w of waiters.splice(0)) {
      if (w.type === msg.type) w.resolve();
      else waiters.push(w);
    }
  });
  const command = (msg: ToWorker, until: FromWorker['type']) =>
    new Promise<void>((resolve) => {
      waiters.push({ type: until, resolve });
      worker.send(msg);
    });
  try {
    const receivers = Array.from({ length: options.receivers }, (_, i) => String(RECEIVER_BASE + i));
    const senders = Array.from({ length: options.receivers }, (_, i) => String(SENDER_BASE + i));
    await command({ type: 'link', descriptor: options.descriptor, phones: receivers }, 'linked');
    for (const phone of senders) await options.control.createPhone(phone);
    // First contacts before the measured flow, as the connector's step does.
    await Promise.all(senders.map((phone, i) => options.control.sendFromPhone(phone, receivers[i]!, 'floor first contact')));
    await waitFor(`${options.receivers} first contacts at the plain Baileys sockets`, () => received >= options.receivers, {
      timeoutMs: 120_000,
      intervalMs: 50,
    });
    const receivedBefore = received;

    const cpuBefore = cpuSecondsOf(worker.pid ?? -1);
    const sandboxCpuBefore = cpuSecondsOf(options.sandboxPid);
    const started = performance.now();
    const jobs = Array.from({ length: options.messages }, (_, i) => i);
    await inBatches(jobs, options.sendConcurrency, async (i) => {
      if (options.rate) await sleep(Math.max(0, started + (i * 1000) / options.rate - performance.now()));
      await options.control.sendFromPhone(senders[i % options.receivers]!, receivers[i % options.receivers]!, `floor message ${i}`);
    });
    await waitFor(`${options.messages} messages at the plain Baileys sockets`, () => received - receivedBefore >= options.messages, {
      timeoutMs: 900_000,
      intervalMs: 100,
    });
    const elapsed = (performance.now() - started) / 1000;
    const cpuSeconds = cpuSecondsOf(worker.pid ?? -1) - cpuBefore;
    const sandboxCpuSeconds = cpuSecondsOf(options.sandboxPid) - sandboxCpuBefore;
    return {
      cpuMsPerMessage: (cpuSeconds * 1000) / options.messages,
      rate: options.messages / elapsed,
      sandboxCpuMsPerMessage: (sandboxCpuSeconds * 1000) / options.messages,
    };
  } finally {
    await new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.send({ type: 'stop' } satisfies ToWorker);
    });
  }
}
