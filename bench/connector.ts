/**
 * `npm run bench:connector` — the connector against the sandbox network, run as a child process
 * (`connector/main.ts`, so its RSS is the connector's alone); the sandbox runs in a second child
 * process, the emulators and a webhook receiver in this one.
 *
 * 1. Memory per connected account: RSS of the idle connector with 0 accounts, then with 1, 50
 *    and 200 linked and connected accounts (BENCH_ACCOUNTS="1,50,200"); per account =
 *    (RSS - RSS at 0) / accounts.
 *    Each figure is taken from a fresh connector process that resumed the linked accounts from
 *    DynamoDB and idled for 10 s (the process that did the pairing keeps its garbage in RSS),
 *    and again after its idle collector's first collection. The linking waits until the network
 *    has nothing left for the accounts and the connector wrote no keys for 3 s, so the stop and
 *    the resume start from a settled state; the resume's CPU and AWS requests per account are
 *    printed with it.
 * 2. Inbound throughput at 20 accounts (BENCH_THROUGHPUT_ACCOUNTS, 0 skips it; BENCH_MESSAGES total), with
 *    exactly those accounts connected: phones that are not linked send texts to the accounts'
 *    numbers through the sandbox; each message is timed from the send to the webhook POST for
 *    it. Before the measured flow each phone sends its account one message, timed on its own
 *    (first contact: the Signal session and the chat are set up), so the figures are those of
 *    contacts that already talk. Prints messages/s and p50/p99 latency. By default the phones send as one burst (the
 *    figure is the maximum rate; latency then includes queueing); BENCH_RATE=<n> offers n
 *    messages/s instead, for the latency at a sustained rate.
 *    The step runs once per count of matching webhooks in BENCH_WEBHOOKS (default "1,5": one
 *    registration, then five, each its own URL on the receiver): a message counts as delivered
 *    when every webhook got it. It prints the connector CPU per message of each count and the
 *    ratio of the last to the first, each also net of the connector's idle CPU (measured over
 *    the 10 s before the step, its accounts connected and no traffic).
 *    BENCH_CPU_PROF=<dir> profiles each connector process (the step's window is printed, for
 *    bench/cpu-profile-top.ts); BENCH_NODE_FLAGS adds Node flags to the connector child.
 * 3. The floor (bench/connector/floor.ts, BENCH_FLOOR=0 skips it): plain Baileys sockets over the
 *    same traffic; the connector's CPU per message as a ratio to theirs, as measured and with each
 *    step scaled by the sandbox's CPU per message in it (the VM's speed moves between steps).
 * 4. Memory with traffic (bench/connector/memory-traffic.ts): RSS per account after every account
 *    exchanged messages with 20 contacts and sits in 3 groups (BENCH_TRAFFIC_ACCOUNTS="200,1000"), and a soak at a
 *    steady 20 messages/s (BENCH_SOAK_MINUTES, 0 = off) over the accounts linked by then, after
 *    the last step or the step of BENCH_SOAK_AT accounts. Each step also prints the connector's
 *    V8 heap (reserved, in use) and external memory from its /metrics; BENCH_HEAP_SNAPSHOT=<dir>
 *    writes a heap snapshot of it after the step (its live heap, for bench/heap-snapshot-top.ts).
 * 5. Group fan-out (bench/connector/group-fanout.ts, after the throughput step; BENCH_GROUP=0 skips
 *    it): API send latency to a group of BENCH_GROUP_MEMBERS (50) against one-to-one, p50/p99.
 * Also the empty connector's RSS as the image runs it (bench/connector/baseline.ts).
 * Goals: under 15 MB per idle account; at least 200 messages/s with p99 under 500 ms; five
 * webhooks at most 1.5x the connector CPU per message of one.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createClients, destroyClients } from '../core/aws.js';
import { loadConfig } from '../core/config.js';
import { createQueues } from '../core/queues.js';
import { ensureResources } from '../core/resources.js';
import { listAccounts } from '../core/store/accounts.js';
import { tableOf } from '../core/store/table.js';
import { registerWebhook } from '../core/store/webhooks.js';
import { startEmulators } from '../infra/local/emulators.js';
import { bundledEmptyConnectorRss, formatMb } from './connector/baseline.js';
import { measureBaileysFloor } from './connector/floor.js';
import { measureGroupFanout } from './connector/group-fanout.js';
import { linkAccounts } from './connector/link.js';
import {
  cpuSecondsOf,
  heapSnapshot,
  inBatches,
  MB,
  memoryByKind,
  percentile,
  rssByMapping,
  rssOf,
  sleep,
  watchIdle,
} from './connector/measure.js';
import { measureMemoryWithTraffic, soak, type TrafficContext } from './connector/memory-traffic.js';
import { startSandboxProcess } from './sandbox-process.js';
import { spawnConnector, type ChildConnector } from '../test/e2e/support/child-connector.js';
import { sandboxControl } from '../test/e2e/support/sandbox-control.js';
import { waitFor } from '../test/support/wait.js';

const accountSteps = (process.env.BENCH_ACCOUNTS ?? '1,50,200')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const throughputAccounts = Number(process.env.BENCH_THROUGHPUT_ACCOUNTS ?? 20);
const totalMessages = Number(process.env.BENCH_MESSAGES ?? 2000);
const SEND_CONCURRENCY = Number(process.env.BENCH_SEND_CONCURRENCY ?? 40);
/** Messages per second offered by the phones; unset = as fast as the sandbox accepts (a burst). */
const offeredRate = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const webhookSteps = (process.env.BENCH_WEBHOOKS ?? '1,5')
  .split(',')
  .map(Number)
  .filter((n) => n > 0)
  .sort((a, b) => a - b);
const trafficSteps = (process.env.BENCH_TRAFFIC_ACCOUNTS ?? '200,1000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const soakMinutes = Number(process.env.BENCH_SOAK_MINUTES ?? 0);
/** BENCH_IDLE_MINUTES: after each memory reading, RSS sampled every 30 s for this long (off by default). */
const idleMinutes = Number(process.env.BENCH_IDLE_MINUTES ?? 0);
/** The soak runs after this step (by default the last); an earlier one leaves the larger steps for after it. */
const soakAt = Number(process.env.BENCH_SOAK_AT ?? Math.max(0, ...accountSteps, throughputAccounts, ...trafficSteps));
const runFloor = process.env.BENCH_FLOOR !== '0';
const runGroup = process.env.BENCH_GROUP !== '0';
const LINK_CONCURRENCY = 8;
const SETTLE_MS = 10_000;
const OLD_LONG_POLL_MS = 21_000;
/** The last part of that wait, in which the connector's idle CPU is measured. */
const IDLE_SAMPLE_MS = 10_000;
/** How long the memory step watches the connected accounts' idle cost (a lease round every 5 s, keepalives). */
const IDLE_COST_MS = 30_000;
/** How often the preloaded counter (bench/connector/sdk-call-counter.cjs) rewrites its file, plus a margin. */
const SDK_COUNT_EVERY_MS = 600;
/** How long the memory step waits for the connector's idle collector to run once. */
const IDLE_COLLECTION_TIMEOUT_MS = 180_000;
/** How long the connector writes no keys before the linking counts as settled. */
const KEY_WRITES_QUIET_MS = 3_000;
const silent = pino({ level: 'silent' });

async function main() {
  const emulators = await startEmulators();
  const sandbox = await startSandboxProcess();
  const sandboxEnv = sandbox.env;
  // The receiver below listens on 127.0.0.1.
  // The receiver below listens on 127.0.0.1. Accounts send unpaced: this measures the pipeline, not pacing.
  const localReceiver = { WEBHOOK_ALLOW_PRIVATE: 'true', SEND_PACING_DEFAULT: 'off' };
  const config = loadConfig({ ...emulators.env, ...sandboxEnv, ...localReceiver, LOG_LEVEL: 'silent' });
  const clients = createClients(config);
  await ensureResources(config, clients, silent);
  const table = tableOf(config, clients);
  const queues = createQueues(config, clients, silent);
  const control = sandboxControl(sandbox.descriptor.controlUrl);

  /** By message id: the webhooks (paths) that got it, and when the last of them did. */
  const delivered = new Map<string, { paths: Set<string>; at: number }>();
  let webhookCount = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId?: string };
        if (body.messageId) {
          const entry = delivered.get(body.messageId) ?? { paths: new Set<string>(), at };
          if (!entry.paths.has(req.url ?? '')) entry.at = at;
          entry.paths.add(req.url ?? '');
          delivered.set(body.messageId, entry);
        }
      } catch {
        // Not ours: ignored.
      }
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  /** Registers more webhooks (one URL each on the receiver) up to `count`. */
  const registerWebhooksUpTo = async (count: number) => {
    for (; webhookCount < count; webhookCount += 1) {
      await registerWebhook(table, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook/${webhookCount + 1}`);
    }
  };
  const deliveredToAll = (id: string) => (delivered.get(id)?.paths.size ?? 0) >= webhookCount;

  // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each connector process.
  const profile = process.env.BENCH_CPU_PROF;
  // BENCH_HEAP_SNAPSHOT=<dir>: a heap snapshot of the connector after each memory-with-traffic step.
  const heapSnapshotDir = process.env.BENCH_HEAP_SNAPSHOT;
  // The connector's AWS requests, counted by a preload (sdk-call-counter.cjs) into this file.
  const sdkCallFile = join(await mkdtemp(join(tmpdir(), 'bench-sdk-calls-')), 'counts.json');
  const sdkCalls = (): Record<string, number> => {
    try {
      return JSON.parse(readFileSync(sdkCallFile, 'utf8')) as Record<string, number>;
    } catch {
      return {};
    }
  };
  /**
   * The /metrics URL of each connector process, read from its log as it starts: the harness
   * keeps only its recent lines, and a long step pushes the start-up lines out.
   */
  const metricsUrls = new WeakMap<ChildConnector, Promise<string>>();
  const metricsUrlOf = (connector: ChildConnector) => metricsUrls.get(connector) ?? Promise.reject(new Error('no connector metrics URL'));
  const spawnOne = () => {
    const spawned = spawnConnectorProcess();
    const url = spawned.waitForLine('the metrics server', (line) => line.msg === 'metrics served').then((line) => String(line.url));
    // Awaited only by the memory steps; a connector stopped before it served its metrics is not an error.
    url.catch(() => undefined);
    metricsUrls.set(spawned, url);
    return spawned;
  };
  const spawnConnectorProcess = () =>
    spawnConnector(
      {
        ...emulators.env,
        ...sandboxEnv,
        ...localReceiver,
        TABLE_NAME: config.TABLE_NAME,
        LOG_LEVEL: 'info',
        SDK_CALL_COUNT_FILE: sdkCallFile,
        // Its /metrics tell how much of the RSS is the V8 heap (memory-traffic.ts).
        METRICS_PORT: '0',
        // IDLE_COLLECT_MS=0 turns the idle collector off, to measure what it gives back.
        ...(process.env.IDLE_COLLECT_MS !== undefined ? { IDLE_COLLECT_MS: process.env.IDLE_COLLECT_MS } : {}),
        HOST: '127.0.0.1',
      },
      [
        '--require',
        fileURLToPath(new URL('./connector/sdk-call-counter.cjs', import.meta.url)),
        ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
        ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
        ...(heapSnapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapSnapshotDir}`] : []),
      ],
      // A long run logs a line per send and per account event: the harness keeps the recent ones.
      { keepLines: 10_000 },
    );
  let child = spawnOne();
  const connectedCount = async () => (await listAccounts(table)).filter((a) => a.status === 'connected').length;

  /**
   * A fresh connector process that resumes the `count` linked accounts from DynamoDB: what an
   * idle connector holds per account, without the garbage of pairing (pre-key generation and
   * upload) that the linking process keeps in its RSS.
   */
  /** SIGTERM, and how long the connector took to exit: the README promises seconds. */
  const terminate = async () => {
    const started = performance.now();
    await child.terminate();
    console.log(`connector with ${linked} accounts stopped (SIGTERM to exit) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };

  /**
   * Answers the seconds from the new process's spawn until every account is connected, and
   * what the resume cost per account: the process's CPU and its AWS requests by command.
   */
  const restartWith = async (count: number) => {
    await terminate();
    const spawned = performance.now();
    child = spawnOne();
    await child.waitForLine('the connector to start', (l) => l.msg === 'connector started', 300_000);
    await waitFor(`${count} accounts connected`, async () => (await connectedCount()) >= count, {
      timeoutMs: 600_000,
      intervalMs: 1_000,
    });
    const seconds = (performance.now() - spawned) / 1000;
    const cpuMsPerAccount = (cpuSecondsOf(child.pid) * 1000) / count;
    // The counter file is rewritten every 500 ms, from 0 by each new process.
    await sleep(SDK_COUNT_EVERY_MS);
    const cost = `${cpuMsPerAccount.toFixed(0)} ms CPU, AWS requests ${requestsPerMessage({}, sdkCalls(), count)}`;
    return { seconds, cost };
  };

  /** Resolves once the connector sent no BatchWriteItem for KEY_WRITES_QUIET_MS (none when idle). */
  const keyWritesSettled = async () => {
    let last = -1;
    let quietSince = performance.now();
    for (;;) {
      const writes = sdkCalls().BatchWriteItemCommand ?? 0;
      if (writes !== last) {
        last = writes;
        quietSince = performance.now();
      } else if (performance.now() - quietSince >= KEY_WRITES_QUIET_MS) return;
      await sleep(SDK_COUNT_EVERY_MS);
    }
  };

  let linked = 0;
  const linkUpTo = async (target: number) => {
    const accounts = Array.from({ length: target - linked }, (_, i) => ({
      id: `bench${linked + i}`,
      phone: String(15551000000 + linked + i),
    }));
    const seconds = await linkAccounts({ table, queues, control, connector: child, concurrency: LINK_CONCURRENCY }, accounts);
    linked = target;
    // Baileys receipts a history bootstrap before it stores the mappings it carries: the
    // linking is over once the connector's batch writes (keys, records) stop.
    await keyWritesSettled();
    return seconds;
  };

  const stopAll = async () => {
    await terminate();
    receiver.closeAllConnections();
    receiver.close();
    await sandbox.stop();
    destroyClients(clients);
    await emulators.stop();
  };

  try {
    await child.waitForLine('the connector to start', (l) => l.msg === 'connector started');
    await sleep(SETTLE_MS);
    const baseline = rssOf(child.pid);
    const baselineMemory = await memoryByKind(await metricsUrlOf(child));
    console.log(
      `connector idle, 0 accounts: RSS ${(baseline / MB).toFixed(1)} MB (V8 heap reserved ${formatMb(baselineMemory.heap_total ?? 0)}, ` +
        `in use ${formatMb(baselineMemory.heap_used ?? 0)})`,
    );
    if (heapSnapshotDir) console.log(`connector idle, 0 accounts: heap snapshot ${await heapSnapshot(child.pid, heapSnapshotDir)}`);
    const bundledBaseline = await bundledEmptyConnectorRss({ ...emulators.env, TABLE_NAME: config.TABLE_NAME }, SETTLE_MS);
    console.log(`connector idle, 0 accounts, bundled as in the image: RSS ${formatMb(bundledBaseline)}`);

    const memoryRows: string[] = [];
    /** What the connected accounts cost with no traffic at all: CPU and AWS requests per second. */
    const idleCost = async (accounts: number) => {
      const cpuBefore = cpuSecondsOf(child.pid);
      const callsBefore = sdkCalls();
      await sleep(IDLE_COST_MS);
      const seconds = IDLE_COST_MS / 1000;
      const cpuMsPerSecond = ((cpuSecondsOf(child.pid) - cpuBefore) * 1000) / seconds;
      const { heartbeat_losses: losses = 0 } = await memoryByKind(await metricsUrlOf(child));
      return (
        `      idle, no traffic: ${cpuMsPerSecond.toFixed(1)} ms CPU/s (${(cpuMsPerSecond / accounts).toFixed(2)} per account), ` +
        `AWS requests per second ${requestsPerMessage(callsBefore, sdkCalls(), seconds)}; heartbeat lost ${losses} times since the start`
      );
    };
    /** The connector's V8 heap, what lies outside it, and its RSS by mapping, per account. */
    const rssBreakdown = async (accounts: number) => {
      const memory = await memoryByKind(await metricsUrlOf(child));
      const mappings = rssByMapping(child.pid);
      const perAccount = (bytes: number) => `${formatMb(bytes)} (${(bytes / accounts / MB).toFixed(2)} per account)`;
      return (
        `V8 heap reserved ${perAccount(memory.heap_total ?? 0)}, in use ${perAccount(memory.heap_used ?? 0)}, ` +
        `outside it ${perAccount(memory.external ?? 0)}; RSS anonymous ${perAccount(mappings.anonymous)}, ` +
        `malloc's main heap ${perAccount(mappings.brk)}`
      );
    };
    /**
     * The reading 10 s after a resume holds whatever garbage the resume left (how much depends on
     * where V8's collector happens to be); the connector's idle collector gives it back once the
     * accounts are quiet (connector/idle-collector.ts). This is the idle figure after that.
     */
    const afterIdleCollection = async (accounts: number) => {
      const url = await metricsUrlOf(child);
      const started = performance.now();
      const collected = await waitFor('the idle collector', async () => ((await memoryByKind(url)).idle_collections ?? 0) > 0, {
        timeoutMs: IDLE_COLLECTION_TIMEOUT_MS,
        intervalMs: 1_000,
      }).then(
        () => true,
        () => false,
      );
      const rss = rssOf(child.pid);
      const waited = ((performance.now() - started) / 1000).toFixed(0);
      return (
        `${collected ? `after the idle collector's first collection (${waited} s later)` : `no idle collection within ${waited} s`}: ` +
        `RSS ${formatMb(rss)}, ${((rss - baseline) / accounts / MB).toFixed(2)} MB per account; ${await rssBreakdown(accounts)}`
      );
    };
    const measureMemory = async (target: number) => {
      const linkSeconds = await linkUpTo(target);
      const resume = await restartWith(target);
      await sleep(SETTLE_MS);
      const rss = rssOf(child.pid);
      memoryRows.push(
        `${String(target).padStart(4)} accounts: RSS ${(rss / MB).toFixed(1)} MB, ` +
          `${((rss - baseline) / target / MB).toFixed(2)} MB per account (linked in ${linkSeconds.toFixed(1)} s, ` +
          `resumed by a fresh process in ${resume.seconds.toFixed(1)} s)`,
      );
      console.log(memoryRows.at(-1));
      memoryRows.push(`      resume, per account: ${resume.cost}`);
      console.log(memoryRows.at(-1));
      memoryRows.push(`      where the RSS goes: ${await rssBreakdown(target)}`);
      console.log(memoryRows.at(-1));
      memoryRows.push(`      ${await afterIdleCollection(target)}`);
      console.log(memoryRows.at(-1));
      memoryRows.push(await idleCost(target));
      console.log(memoryRows.at(-1));
      if (idleMinutes > 0) memoryRows.push(await watchIdle(child.pid, await metricsUrlOf(child), target, baseline, idleMinutes));
    };

    const throughputRows: string[] = [];
    const cpuPerMessageByWebhooks = new Map<number, number>();
    /** Of the run with one webhook (the fewest), for the floor's ratio. */
    let connectorCpuMsPerMessage = Number.NaN;
    /** The same, less the connector's idle CPU over the measured time. */
    let connectorNetCpuMsPerMessage = Number.NaN;
    /** The sandbox's CPU per message in that run: a gauge of the VM's speed then. */
    let sandboxCpuMsPerMessage = Number.NaN;
    const measureThroughput = async (receivers: number, webhooks: number) => {
      await registerWebhooksUpTo(webhooks);
      await linkUpTo(Math.max(linked, receivers));
      await restartWith(linked);
      // The stopped connector's webhook long poll (20 s) is still open in the SQS emulator, which
      // would hand it the first event (held until its visibility timeout, ~40 s, ends).
      await sleep(OLD_LONG_POLL_MS - IDLE_SAMPLE_MS);
      // Idle CPU of the connector with its accounts connected and no traffic (queue polls, heartbeats).
      const idleCpuBefore = cpuSecondsOf(child.pid);
      await sleep(IDLE_SAMPLE_MS);
      const idleCpuPerSecond = (cpuSecondsOf(child.pid) - idleCpuBefore) / (IDLE_SAMPLE_MS / 1000);
      const senders = Array.from({ length: receivers }, (_, i) => String(15552000000 + i));
      for (const phone of senders) await control.createPhone(phone);
      // A phone's first message to its account sets up their Signal session (a pre-key message)
      // and the account's chat: first contact, sent and timed before the measured flow, whose
      // figures are then those of contacts that already talk (at a steady rate the first contacts
      // made the first second's latency the run's p99).
      const firstSentAt = new Map<string, number>();
      await Promise.all(
        senders.map(async (phone, i) => {
          const t0 = performance.now();
          const { id } = await control.sendFromPhone(phone, String(15551000000 + i), 'bench first contact');
          firstSentAt.set(id, t0);
        }),
      );
      await waitFor(`${receivers} first contacts at ${webhooks} webhooks`, () => [...firstSentAt.keys()].every(deliveredToAll), {
        timeoutMs: 120_000,
        intervalMs: 50,
      });
      const firstContact = [...firstSentAt].map(([id, t0]) => delivered.get(id)!.at - t0).sort((a, b) => a - b);
      const sentAt = new Map<string, number>();
      const jobs = Array.from({ length: totalMessages }, (_, i) => i);
      const connectorCpuBefore = cpuSecondsOf(child.pid);
      const sdkCallsBefore = sdkCalls();
      const sandboxCpuBefore = cpuSecondsOf(sandbox.pid);
      const benchCpuBefore = process.cpuUsage();
      // On the clock of V8's CPU profiles (CLOCK_MONOTONIC, microseconds): the window to aggregate.
      const windowStartUs = process.hrtime.bigint() / 1000n;
      const started = performance.now();
      await inBatches(jobs, SEND_CONCURRENCY, async (i) => {
        const to = String(15551000000 + (i % receivers));
        if (offeredRate) await sleep(Math.max(0, started + (i * 1000) / offeredRate - performance.now()));
        const t0 = performance.now();
        const { id } = await control.sendFromPhone(senders[i % receivers]!, to, `bench message ${i}`);
        sentAt.set(id, t0);
      });
      console.log(`sandbox accepted ${totalMessages} sends in ${((performance.now() - started) / 1000).toFixed(2)} s`);
      await waitFor(`${totalMessages} messages at ${webhooks} webhooks`, () => [...sentAt.keys()].every(deliveredToAll), {
        timeoutMs: 900_000,
        intervalMs: 200,
      });
      const elapsed = (Math.max(...[...sentAt.keys()].map((id) => delivered.get(id)!.at)) - started) / 1000;
      if (profile) console.log(`  profile window (CLOCK_MONOTONIC us): ${windowStartUs} ${process.hrtime.bigint() / 1000n}`);
      // CPU per message is what a busy shared machine changes least (the rate depends on what else runs).
      const benchCpu = process.cpuUsage(benchCpuBefore);
      const perMessageMs = (seconds: number) => ((seconds * 1000) / totalMessages).toFixed(2);
      const connectorCpu = cpuSecondsOf(child.pid) - connectorCpuBefore;
      const measuredSeconds = (performance.now() - started) / 1000;
      cpuPerMessageByWebhooks.set(webhooks, (connectorCpu * 1000) / totalMessages);
      if (webhooks === webhookSteps[0]) connectorCpuMsPerMessage = (connectorCpu * 1000) / totalMessages;
      if (webhooks === webhookSteps[0])
        connectorNetCpuMsPerMessage = (Math.max(0, connectorCpu - idleCpuPerSecond * measuredSeconds) * 1000) / totalMessages;
      const sandboxCpu = cpuSecondsOf(sandbox.pid) - sandboxCpuBefore;
      if (webhooks === webhookSteps[0]) sandboxCpuMsPerMessage = (sandboxCpu * 1000) / totalMessages;
      const cpuRow =
        `  CPU per message: connector ${perMessageMs(connectorCpu)} ms ` +
        `(${perMessageMs(Math.max(0, connectorCpu - idleCpuPerSecond * measuredSeconds))} ms net of its idle ` +
        `${(idleCpuPerSecond * 1000).toFixed(1)} ms CPU/s over ${measuredSeconds.toFixed(1)} s), ` +
        `emulators and webhook receiver ${perMessageMs((benchCpu.user + benchCpu.system) / 1e6)} ms, ` +
        `sandbox ${perMessageMs(sandboxCpu)} ms`;
      const latencies = [...sentAt].map(([id, t0]) => delivered.get(id)!.at - t0).sort((a, b) => a - b);
      throughputRows.push(
        `inbound at ${receivers} accounts, ${webhooks} webhook${webhooks === 1 ? '' : 's'}${offeredRate ? `, offered ${offeredRate}/s` : ', burst'}: ` +
          `${totalMessages} messages in ${elapsed.toFixed(2)} s = ` +
          `${(totalMessages / elapsed).toFixed(0)} messages/s (arrival to webhook delivered); latency p50 ` +
          `${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies.at(-1)?.toFixed(0)} ms`,
      );
      throughputRows.push(
        `  first contact before it (each phone's first message to its account, ${receivers} at once): ` +
          `latency p50 ${percentile(firstContact, 50).toFixed(0)} ms, max ${firstContact.at(-1)?.toFixed(0)} ms`,
      );
      throughputRows.push(cpuRow);
      // Read after the counter's next write (every 500 ms).
      await sleep(600);
      const requestsRow = `  AWS requests per message (connector): ${requestsPerMessage(sdkCallsBefore, sdkCalls(), totalMessages)}`;
      throughputRows.push(requestsRow);
      for (const row of throughputRows.slice(-4)) console.log(row);
    };

    const floorRows: string[] = [];
    const measureFloor = async (receivers: number) => {
      const floor = await measureBaileysFloor({
        descriptor: sandbox.descriptor,
        control,
        receivers,
        messages: totalMessages,
        sendConcurrency: SEND_CONCURRENCY,
        ...(offeredRate ? { rate: offeredRate } : {}),
        sandboxPid: sandbox.pid,
      });
      // The VM's speed moves by half between minutes on a shared machine, and the floor runs a
      // minute after the connector's step: the sandbox does the same work per message in both
      // (the phones' side), so its CPU per message in each step scales them to one speed.
      const scaled = connectorCpuMsPerMessage / sandboxCpuMsPerMessage / (floor.cpuMsPerMessage / floor.sandboxCpuMsPerMessage);
      floorRows.push(
        `floor, plain Baileys sockets (no store, queue or webhook) at ${receivers} accounts: ${floor.cpuMsPerMessage.toFixed(2)} ms CPU ` +
          `per message (${floor.rate.toFixed(0)} messages/s); connector ${connectorCpuMsPerMessage.toFixed(2)} ms = ` +
          `${(connectorCpuMsPerMessage / floor.cpuMsPerMessage).toFixed(2)}x the floor (net of idle ` +
          `${connectorNetCpuMsPerMessage.toFixed(2)} ms = ${(connectorNetCpuMsPerMessage / floor.cpuMsPerMessage).toFixed(2)}x); ` +
          `scaled by the sandbox's CPU per message in each step (${sandboxCpuMsPerMessage.toFixed(2)} ms then, ` +
          `${floor.sandboxCpuMsPerMessage.toFixed(2)} ms in the floor's): ${scaled.toFixed(2)}x`,
      );
      console.log(floorRows.at(-1));
    };

    const groupRows: string[] = [];
    const trafficRows: string[] = [];
    const traffic: TrafficContext = {
      config,
      clients,
      table,
      queues,
      control,
      phoneOf: (index) => String(15551000000 + index),
      connectorPid: () => child.pid,
      connectorMetricsUrl: () => metricsUrlOf(child),
      ...(heapSnapshotDir ? { heapSnapshotDir } : {}),
      delivered,
      baselineRss: baseline,
    };
    const measureTraffic = async (accounts: number) => {
      await registerWebhooksUpTo(Math.max(webhookCount, 1));
      const before = linked;
      const linkSeconds = await linkUpTo(Math.max(linked, accounts));
      if (linked > before) {
        console.log(
          `linked ${linked - before} accounts in ${linkSeconds.toFixed(0)} s (${(linkSeconds / (linked - before)).toFixed(2)} s each)`,
        );
      }
      const resume = await restartWith(linked);
      console.log(`a fresh connector resumed ${linked} accounts in ${resume.seconds.toFixed(0)} s (per account: ${resume.cost})`);
      await sleep(OLD_LONG_POLL_MS);
      trafficRows.push(await measureMemoryWithTraffic(traffic, accounts));
      console.log(trafficRows.at(-1));
      if (idleMinutes > 0) trafficRows.push(await watchIdle(child.pid, await metricsUrlOf(child), accounts, baseline, idleMinutes));
    };

    // Throughput runs when exactly `throughputAccounts` accounts exist, between the memory steps;
    // the traffic steps after the idle ones (traffic leaves sessions behind).
    const steps = [...new Set([...accountSteps, throughputAccounts, ...trafficSteps])].sort((a, b) => a - b);
    for (const step of steps) {
      if (accountSteps.includes(step)) await measureMemory(step);
      if (step > 0 && step === throughputAccounts) {
        for (const webhooks of webhookSteps) await measureThroughput(step, webhooks);
        if (runFloor) await measureFloor(step);
        if (runGroup) {
          groupRows.push(...(await measureGroupFanout({ config, clients, table, control, linked, phoneOf: traffic.phoneOf })));
          for (const row of groupRows) console.log(row);
        }
      }
      if (trafficSteps.includes(step)) await measureTraffic(step);
      if (soakMinutes > 0 && step === soakAt) trafficRows.push(...(await soak(traffic, linked, soakMinutes)));
    }
    const [fewest, most] = [webhookSteps[0], webhookSteps.at(-1)];
    if (fewest !== undefined && most !== undefined && most !== fewest && cpuPerMessageByWebhooks.has(most)) {
      const ratio = cpuPerMessageByWebhooks.get(most)! / cpuPerMessageByWebhooks.get(fewest)!;
      throughputRows.push(`connector CPU per message, ${most} webhooks / ${fewest}: ${ratio.toFixed(2)}x (goal: at most 1.5x)`);
    }

    console.log('\n== connector benchmark (sandbox network, emulators, connector in a child process) ==');
    console.log(
      `memory, idle connector: baseline ${(baseline / MB).toFixed(1)} MB with 0 accounts (${formatMb(bundledBaseline)} bundled as in the image)`,
    );
    for (const row of memoryRows) console.log(`  ${row}`);
    for (const row of throughputRows) console.log(row);
    for (const row of floorRows) console.log(row);
    for (const row of groupRows) console.log(row);
    if (trafficRows.length > 0) console.log('memory with traffic (RSS per account above the empty connector):');
    for (const row of trafficRows) console.log(`  ${row}`);
  } finally {
    await stopAll();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

/** Requests of each command between two counts, per message, the largest first, after the total. */
/** AWS requests by command between two counts, per message (or per second: `messages` is then the seconds). */
function requestsPerMessage(before: Record<string, number>, after: Record<string, number>, messages: number): string {
  const rows = Object.entries(after)
    .map(([command, count]) => [command.replace(/Command$/, ''), (count - (before[command] ?? 0)) / messages] as const)
    .filter(([, perMessage]) => perMessage > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, perMessage]) => sum + perMessage, 0);
  return `${total.toFixed(2)} in all (${rows.map(([command, perMessage]) => `${command} ${perMessage.toFixed(2)}`).join(', ')})`;
}
