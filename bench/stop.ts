/**
 * `npm run bench:stop` — how fast the gateway stops, and how fast a webhook receiver that comes
 * back gets its backlog. The focused figures; bench/crash.ts measures the same things at scale.
 *
 * 1. Stop time of `npm start` (infra/local/start.ts, embedded AWS) with 0 accounts: SIGINT to
 *    process exit, BENCH_RUNS runs (3).
 * 2. Stop time of the connector (connector/main.ts; emulators in this process, the sandbox in a
 *    child) with work in flight: BENCH_ACCOUNTS (20) sessions open on the sandbox waiting for a
 *    QR scan, as many webhook POSTs held by a receiver that never answers, and a command per
 *    account just queued. SIGTERM to exit, then how long until the webhook events that were in
 *    flight are visible in the queue again (for the next connector). BENCH_RUNS runs.
 * 3. Webhook recovery: BENCH_EVENTS (50) events for a receiver that answers 503 for
 *    BENCH_DOWN_SECONDS (60), then 200, delivered by the worker with the default retry and
 *    circuit settings. Prints the POSTs it got while down and the time from its coming back to
 *    the first and the last event delivered.
 * Goals: stops within 3 s with nothing in flight, within 10 s with work in flight; unfinished
 * work visible again within a few seconds; a backlog within 60 s of the receiver's first 2xx.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { startWebhookDelivery } from '../connector/webhooks/delivery-worker.js';
import { createClients, destroyClients } from '../core/aws.js';
import { loadConfig, type Config } from '../core/config.js';
import { newCommandId } from '../core/ids.js';
import { createQueues } from '../core/queues.js';
import { ensureResources } from '../core/resources.js';
import { messageEventFor } from '../core/message-event.js';
import type { WebhookEvent } from '../core/schemas/webhook-event.js';
import { createAccount } from '../core/store/accounts.js';
import { tableOf } from '../core/store/table.js';
import { registerWebhook } from '../core/store/webhooks.js';
import { startEmulators } from '../infra/local/emulators.js';
import { startSandboxProcess } from './sandbox-process.js';
import { spawnConnector } from '../test/e2e/support/child-connector.js';
import { waitFor } from '../test/support/wait.js';
import { CONNECTOR_NODE_FLAGS } from '../connector/node-flags.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 20);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50);
const DOWN_SECONDS = Number(process.env.BENCH_DOWN_SECONDS ?? 60);
/** Which of the three parts to run, e.g. BENCH_PARTS=3 (default all). */
const PARTS = new Set((process.env.BENCH_PARTS ?? '1,2,3').split(',').map((p) => p.trim()));
const silent = pino({ level: 'silent' });
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function stopOfNpmStart(): Promise<number[]> {
  const figures: number[] = [];
  for (let run = 1; run <= RUNS; run += 1) {
    const dataDir = await mkdtemp(join(tmpdir(), 'bench-stop-'));
    const child = spawn(process.execPath, [...CONNECTOR_NODE_FLAGS, '--import', 'tsx', 'infra/local/start.ts'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        // The start-up summary comes once the whole stack runs and its signal handlers are set.
        if (line.includes('"msg":"ready"')) resolve();
      });
      void closed.then((code) => reject(new Error(`npm start exited early with ${code}`)));
    });
    const signalledAt = performance.now();
    child.kill('SIGINT');
    const code = await closed;
    figures.push(performance.now() - signalledAt);
    console.log(`  run ${run}: exit ${code} after ${seconds(figures.at(-1)!)}`);
    await rm(dataDir, { recursive: true, force: true });
  }
  return figures;
}

function webhookEvent(accountId: string, n: number): WebhookEvent {
  const peer = '15550002222@s.whatsapp.net';
  const messageId = `3EB0BENCH${n}${Date.now().toString(36).toUpperCase()}`;
  return messageEventFor(accountId, {
    messageId,
    from: peer,
    chatId: peer,
    timestamp: Date.now(),
    type: 'text',
    fromMe: false,
    text: `bench ${n}`,
  });
}

async function stopWithWorkInFlight(emulatorEnv: Record<string, string>): Promise<Array<{ stopMs: number; visibleMs: number }>> {
  const sandbox = await startSandboxProcess();
  const sandboxEnv = sandbox.env;
  // A receiver that holds every POST open: each one is a delivery in flight at the stop.
  const held = new Set<ServerResponse>();
  const receiver = createServer((req, res) => {
    req.resume();
    held.add(res);
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const figures: Array<{ stopMs: number; visibleMs: number }> = [];
  try {
    for (let run = 1; run <= RUNS; run += 1) {
      const suffix = `${run}-${Date.now()}`;
      const names = {
        TABLE_NAME: `bench-stop-${suffix}`,
        COMMAND_QUEUE_NAME: `bench-stop-${suffix}.fifo`,
        COMMAND_DLQ_NAME: `bench-stop-${suffix}-dlq.fifo`,
        WEBHOOK_QUEUE_NAME: `bench-stop-wh-${suffix}`,
        WEBHOOK_DLQ_NAME: `bench-stop-wh-${suffix}-dlq`,
      };
      const config = loadConfig({ ...emulatorEnv, ...sandboxEnv, ...names, LOG_LEVEL: 'silent', SEND_PACING_DEFAULT: 'off' });
      const clients = createClients(config);
      await ensureResources(config, clients, silent);
      const table = tableOf(config, clients);
      const queues = createQueues(config, clients, silent);
      await registerWebhook(table, receiverUrl);
      const accountIds = Array.from({ length: ACCOUNTS }, (_, i) => `stop${run}n${i}`);
      for (const id of accountIds) await createAccount(table, { id, collectionName: `auth_${id}`, status: 'connecting' });

      // The receiver is on loopback, which webhook targets may not be by default.
      const connector = spawnConnector({
        ...emulatorEnv,
        ...sandboxEnv,
        ...names,
        LOG_LEVEL: 'info',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        SEND_PACING_DEFAULT: 'off',
      });
      await connector.waitForLine('the connector to start', (l) => l.msg === 'connector started', 120_000);
      await waitFor(
        'a QR for every account',
        () => accountIds.every((id) => connector.lines.some((l) => l.accountId === id && l.event === 'qr')),
        { timeoutMs: 120_000, intervalMs: 200 },
      );
      held.clear();
      for (let n = 0; n < ACCOUNTS; n += 1) await queues.sendWebhookEvent(webhookEvent(accountIds[n]!, n));
      await waitFor('every webhook POST to be held', () => held.size >= ACCOUNTS, { timeoutMs: 60_000, intervalMs: 50 });
      for (const accountId of accountIds) {
        await queues.sendCommand({
          type: 'send_text',
          accountId,
          commandId: newCommandId(),
          payload: { messageId: newCommandId().replaceAll('-', '').toUpperCase(), to: '15550002222@s.whatsapp.net', text: 'in flight' },
        });
      }

      const signalledAt = performance.now();
      const code = await connector.terminate();
      const exitedAt = performance.now();
      console.log(`  run ${run}: exit ${code} after ${seconds(exitedAt - signalledAt)}`);
      // The next connector's receives: when does it get every event that was in flight?
      const received = new Set<string>();
      while (received.size < ACCOUNTS && performance.now() - exitedAt < 120_000) {
        for (const r of await queues.receiveWebhookEvents({ waitSeconds: 1, visibilityTimeoutSeconds: 600 })) received.add(r.body.eventId);
      }
      const figure = { stopMs: exitedAt - signalledAt, visibleMs: performance.now() - exitedAt };
      figures.push(figure);
      console.log(
        `    ${received.size}/${ACCOUNTS} in-flight webhook events received by the next receiver ${seconds(figure.visibleMs)} after the exit`,
      );
      for (const res of held) res.destroy();
      destroyClients(clients);
    }
  } finally {
    for (const res of held) res.destroy();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await sandbox.stop();
  }
  return figures;
}

async function webhookRecovery(emulatorEnv: Record<string, string>): Promise<void> {
  const suffix = Date.now().toString(36);
  const config: Config = loadConfig({
    ...emulatorEnv,
    TABLE_NAME: `bench-recovery-${suffix}`,
    WEBHOOK_QUEUE_NAME: `bench-recovery-${suffix}`,
    WEBHOOK_DLQ_NAME: `bench-recovery-${suffix}-dlq`,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const clients = createClients(config);
  await ensureResources(config, clients, silent);
  const table = tableOf(config, clients);
  const queues = createQueues(config, clients, silent);

  let upAt: number | undefined;
  let postsWhileDown = 0;
  let firstOkAt: number | undefined;
  const deliveredAt = new Map<string, number>();
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (upAt === undefined) {
        postsWhileDown += 1;
        res.writeHead(503).end();
        return;
      }
      const now = performance.now();
      firstOkAt ??= now;
      const id = String(req.headers['x-webhook-id']);
      if (!deliveredAt.has(id)) deliveredAt.set(id, now);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  await registerWebhook(table, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`);
  const worker = startWebhookDelivery({ config, clients, logger: silent, queues });
  try {
    for (let n = 0; n < EVENTS; n += 1) await queues.sendWebhookEvent(webhookEvent('recovery', n));
    console.log(`  receiver down for ${DOWN_SECONDS} s (answers 503), ${EVENTS} events queued...`);
    await new Promise((resolve) => setTimeout(resolve, DOWN_SECONDS * 1000));
    upAt = performance.now();
    await waitFor('every event delivered', () => deliveredAt.size >= EVENTS, { timeoutMs: 30 * 60_000, intervalMs: 100 });
    const times = [...deliveredAt.values()].map((t) => t - upAt!).sort((a, b) => a - b);
    console.log(`  POSTs while down: ${postsWhileDown} (${EVENTS} events; without a circuit each retry of each event is a POST)`);
    console.log(`  first 2xx ${seconds(firstOkAt! - upAt)} after the receiver came back`);
    console.log(
      `  first event delivered ${seconds(times[0]!)}, last ${seconds(times.at(-1)!)} after it came back (${seconds(times.at(-1)! - (firstOkAt! - upAt))} after the first 2xx)`,
    );
  } finally {
    await worker.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    destroyClients(clients);
  }
}

function summary(label: string, values: number[]): void {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(
    `${label}: min ${seconds(sorted[0]!)}, median ${seconds(sorted[Math.floor(sorted.length / 2)]!)}, max ${seconds(sorted.at(-1)!)}`,
  );
}

async function main(): Promise<void> {
  if (PARTS.has('1')) {
    console.log(`1. npm start with 0 accounts: SIGINT to exit (${RUNS} runs)`);
    summary('npm start stop, 0 accounts', await stopOfNpmStart());
  }

  const emulators = await startEmulators();
  try {
    if (PARTS.has('2')) {
      console.log(
        `2. connector/main.ts with ${ACCOUNTS} open sessions, ${ACCOUNTS} webhook POSTs and ${ACCOUNTS} commands in flight: SIGTERM to exit (${RUNS} runs)`,
      );
      const inFlight = await stopWithWorkInFlight(emulators.env);
      summary(
        'connector stop, work in flight',
        inFlight.map((f) => f.stopMs),
      );
      summary(
        'in-flight webhook events received by the next receiver, after the exit',
        inFlight.map((f) => f.visibleMs),
      );
    }
    if (PARTS.has('3')) {
      console.log('3. webhook recovery (default retry and circuit settings)');
      await webhookRecovery(emulators.env);
    }
  } finally {
    await emulators.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
