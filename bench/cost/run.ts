/** bench:cost's steps (bench/cost.ts says what each measures). */
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { destroyClients } from '../../core/aws.js';
import { createAccount } from '../../core/store/accounts.js';
import { registerWebhook } from '../../core/store/webhooks.js';
import { startApiServer } from '../../functions/server.js';
import { linkAccounts, type BenchAccount } from '../connector/link.js';
import { inBatches, sleep } from '../connector/measure.js';
import {
  awsRequests,
  billOf,
  combine,
  difference,
  fixedLines,
  HOURS_PER_MONTH,
  LAMBDA_GB,
  ofScope,
  requestsByItemKind,
  requestsByLine,
  scale,
  snapshot,
  total,
  unitsByKind,
  type BillLine,
  type Usage,
} from './bill.js';
import { watch } from './http-meter.js';
import { receiveTexts, sendTexts, warmUp, type Pair } from './traffic.js';
import { startCrashReceiver } from '../crash/receiver.js';
import { restClient } from '../crash/rest-client.js';
import { startSandboxStack } from '../sandbox-stack.js';
import { Cluster } from '../scale/cluster.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ACCOUNTS = env('BENCH_COST_ACCOUNTS', 100);
const OFFSET_MS = env('BENCH_COST_OFFSET_S', 150) * 1000;
const IDLE_MS = env('BENCH_COST_IDLE_MINUTES', 15) * 60_000;
const TEXTS = env('BENCH_COST_TEXTS', 300);
const SENDS = env('BENCH_COST_SENDS', 150);
const PAIRS = Math.min(ACCOUNTS, env('BENCH_COST_PAIRS', 20));
const SIMULATED = env('BENCH_COST_SIMULATED', 10_000);
const CONNECTORS = env('BENCH_COST_CONNECTORS', 4);
const SCALE_MS = env('BENCH_COST_SCALE_MINUTES', 5) * 60_000;
/** After the last text of a window: its receipts and status writes land. */
const TAIL_MS = 5_000;
const QUIET_MS = 12_000;
const SETTLE_CAP_MS = 300_000;
const DAYS_PER_MONTH = HOURS_PER_MONTH / 24;
const silent = pino({ level: 'silent' });

const GOALS = { idleAccountHour: 2, receivedText: 4, apiSend: 15, billA: 2, billB: 25, billC: 10 };
const met = (value: number, goal: number) => `goal ≤ ${goal}: ${value <= goal ? 'MET' : 'NOT MET'}`;
const usd = (n: number) => `$${n.toFixed(2)}`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(', ');

async function main() {
  const started = performance.now();
  const report: string[] = [];
  const out = (line = '') => {
    report.push(line);
    console.log(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${line}`);
  };
  out(
    `== bench:cost: ${ACCOUNTS} linked accounts, idle ${IDLE_MS / 60_000} min, ${TEXTS} texts in, ${SENDS} sends, ${SIMULATED} accounts on ${CONNECTORS} connectors ==`,
  );

  const stack = await startSandboxStack({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const { emulators, sandbox, config, clients, table, queues, control } = stack;
  watch('s3', emulators.endpoints.s3);
  watch('sqs', emulators.endpoints.sqs);
  const receiver = await startCrashReceiver();
  await registerWebhook(table, receiver.url);
  const api = await startApiServer({ config, clients, logger: silent, port: 0, host: '127.0.0.1' });
  watch('api', api.url);
  const rest = restClient(api.url);
  const cluster = new Cluster({ ...stack.env, TABLE_NAME: config.TABLE_NAME, LOG_LEVEL: 'info' });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.kill(sandbox.pid, 'SIGKILL');
      process.exit(130);
    });
  }
  /** Usage over `ms` of doing nothing. */
  const window = async (ms: number) => {
    const before = snapshot();
    await sleep(ms);
    return difference(snapshot(), before);
  };
  /** Usage of `work`, less the idle usage of its duration at `idlePerMs`. */
  const measured = async <T>(work: () => Promise<T>, idlePerMs: Usage) => {
    const before = snapshot();
    const t0 = performance.now();
    const result = await work();
    await sleep(TAIL_MS);
    const usage = difference(snapshot(), before);
    return { usage: combine(usage, idlePerMs, -(performance.now() - t0)), result };
  };
  const settle = async (step: string) => {
    const { settled } = await cluster.waitSettled(ACCOUNTS, QUIET_MS, SETTLE_CAP_MS);
    if (!settled) out(`${step}: NOT settled within ${SETTLE_CAP_MS / 1000} s; measured all the same`);
  };

  try {
    const accounts: BenchAccount[] = Array.from({ length: ACCOUNTS }, (_, i) => ({ id: `cost${i}`, phone: String(15557000000 + i) }));
    const linker = await cluster.start();
    const linkSeconds = await linkAccounts({ table, queues, control, connector: linker, concurrency: 8 }, accounts);
    await linker.terminate();
    await cluster.start();
    await settle('resume');
    out(`${ACCOUNTS} accounts linked in ${linkSeconds.toFixed(0)} s and resumed by a fresh connector; load ${load()}`);

    // (a) Idle.
    await sleep(OFFSET_MS);
    const idle = await window(IDLE_MS);
    const idleHours = IDLE_MS / 3_600_000;
    const perAccountHour = scale(ofScope(idle, 'account'), 1 / ACCOUNTS / idleHours);
    const fixedHour = scale(ofScope(idle, 'fixed'), 1 / idleHours);
    out();
    out(`(a) ${ACCOUNTS} linked accounts idle ${IDLE_MS / 60_000} min (1 connector):`);
    out(
      `  AWS requests per idle account-hour: ${awsRequests(perAccountHour).toFixed(2)} (${met(awsRequests(perAccountHour), GOALS.idleAccountHour)}); per deployment-hour: ${awsRequests(fixedHour).toFixed(0)}`,
    );
    out(`  per account-hour by line: ${describeRequests(perAccountHour, 2)}`);
    out(`  per deployment-hour by line: ${describeRequests(fixedHour, 0)}`);
    out(`  write units per account-hour: ${describeUnits(perAccountHour)}`);
    out(`  write units per deployment-hour: ${describeUnits(fixedHour)}`);
    const idleMonth = (count: number) => combine(scale(fixedHour, HOURS_PER_MONTH), scale(perAccountHour, count * HOURS_PER_MONTH));
    const billA = billOf(idleMonth(1_000));
    printBill(out, '(a) 1,000 idle accounts, a month', billA, fixedLines(1), GOALS.billA);

    // (b) Traffic.
    const idlePerMs = scale(idle, 1 / IDLE_MS);
    const pairs: Pair[] = accounts.slice(0, PAIRS).map((account, i) => ({ account, phone: String(15557900000 + i) }));
    for (const { phone } of pairs) await control.createPhone(phone);
    await warmUp(pairs, control, rest, receiver);
    await sleep(QUIET_MS);
    const received = await measured(() => receiveTexts(pairs, control, receiver, TEXTS, 2), idlePerMs);
    const perText = scale(received.usage, 1 / TEXTS);
    const sent = await measured(() => sendTexts(pairs, rest, SENDS, 1), idlePerMs);
    const perSend = scale(sent.usage, 1 / SENDS);
    out();
    out(`(b) traffic over ${PAIRS} pairs (each window less its idle share):`);
    out(
      `  AWS requests per received text at 2/s: ${awsRequests(perText).toFixed(2)} (${met(awsRequests(perText), GOALS.receivedText)}): ${describeRequests(perText, 2)}`,
    );
    out(
      `  AWS requests per API text send at 1/s: ${awsRequests(perSend).toFixed(2)} (${met(awsRequests(perSend), GOALS.apiSend)}): ${describeRequests(perSend, 2)}; answered in ${sent.result.p50.toFixed(0)} ms (p50)`,
    );
    out(`  DynamoDB requests per received text by item: ${describeRequestKinds(perText)}`);
    out(`  DynamoDB requests per API send by item: ${describeRequestKinds(perSend)}`);
    out(`  write units per received text: ${describeUnits(perText)}`);
    out(`  write units per API send: ${describeUnits(perSend)}`);
    const messagesMonth = combine(scale(perText, 100_000 * DAYS_PER_MONTH), scale(perSend, 50_000 * DAYS_PER_MONTH));
    const lambdaGbSeconds = 50_000 * DAYS_PER_MONTH * (sent.result.mean / 1000) * LAMBDA_GB;
    const billB = billOf(messagesMonth, { lambdaGbSeconds });
    printBill(out, '(b) 1,000 accounts × (100 in, 50 out) a day, message costs, a month', billB, [], GOALS.billB);
    out(`  with (a)'s idle lines: ${usd(total(billB) + total(billA))} (+ ${usd(total(fixedLines(1)))} not following requests)`);

    // (c) Many accounts on several connectors (BENCH_COST_CONNECTORS=0 skips it).
    if (CONNECTORS > 0) {
      const simulated = Array.from({ length: Math.max(0, SIMULATED - ACCOUNTS) }, (_, i) => `sim${i}`);
      await inBatches(simulated, 32, async (id) => {
        await createAccount(table, { id, collectionName: `auth_${id}`, status: 'not_started' });
      });
      await Promise.all(Array.from({ length: CONNECTORS - 1 }, () => cluster.start()));
      await settle(`${CONNECTORS} connectors`);
      await sleep(OFFSET_MS);
      const wide = await window(SCALE_MS);
      const scaleHours = SCALE_MS / 3_600_000;
      const wideFixedHour = scale(ofScope(wide, 'fixed'), 1 / scaleHours);
      const widePerAccountHour = scale(ofScope(wide, 'account'), 1 / ACCOUNTS / scaleHours);
      out();
      out(`(c) ${ACCOUNTS + simulated.length} accounts (${ACCOUNTS} linked), ${CONNECTORS} connectors, ${SCALE_MS / 60_000} min:`);
      out(
        `  AWS requests per idle account-hour ${awsRequests(widePerAccountHour).toFixed(2)}, per deployment-hour ${awsRequests(wideFixedHour).toFixed(0)}: ${describeRequests(wideFixedHour, 0)}`,
      );
      const billC = billOf(combine(scale(wideFixedHour, HOURS_PER_MONTH), scale(widePerAccountHour, SIMULATED * HOURS_PER_MONTH)));
      printBill(
        out,
        `(c) ${SIMULATED.toLocaleString('en')} idle accounts on ${CONNECTORS} connectors, a month`,
        billC,
        fixedLines(CONNECTORS),
        GOALS.billC,
      );
    }
  } finally {
    await cluster.killAll();
    await api.close();
    await receiver.stop();
    await sandbox.stop();
    destroyClients(clients);
    await emulators.stop();
  }
  console.log(`\n==== bench:cost results (${((performance.now() - started) / 60_000).toFixed(1)} min, load ${load()}) ====`);
  for (const line of report) console.log(line);
}

function describeRequests(usage: Usage, digits: number): string {
  return requestsByLine(usage)
    .map(([line, n]) => `${line} ${n.toFixed(digits)}`)
    .join(', ');
}

function describeRequestKinds(usage: Usage): string {
  return requestsByItemKind(usage)
    .map(([line, n]) => `${line} ${n.toFixed(2)}`)
    .join(', ');
}

function describeUnits(usage: Usage): string {
  const kinds = unitsByKind(usage).filter((k) => k.writeTable + k.writeIndex > 0.005);
  const writes = kinds.reduce((t, k) => t + k.writeTable + k.writeIndex, 0);
  const reads = unitsByKind(usage).reduce((t, k) => t + k.read, 0);
  const lines = kinds
    .map((k) => `${k.kind} ${k.writeTable.toFixed(2)}+${k.writeIndex.toFixed(2)} in ${k.writes.toFixed(2)} writes`)
    .join(', ');
  return `${writes.toFixed(2)} (table+index by item: ${lines}); read units ${reads.toFixed(2)}`;
}

function printBill(out: (line?: string) => void, title: string, lines: BillLine[], notRequests: BillLine[], goal: number) {
  const requestDriven = total(lines);
  out(`  ${title}:`);
  for (const line of lines) if (line.dollars >= 0.005) out(`    ${line.line}: ${line.quantity} → ${usd(line.dollars)}`);
  const metrics = notRequests.filter((l) => l.line.startsWith('CloudWatch'));
  const withMetrics = requestDriven + total(metrics);
  out(`    request-driven total${metrics.length ? ' with the custom metrics' : ''}: ${usd(withMetrics)} (${met(withMetrics, goal)})`);
  for (const line of notRequests.filter((l) => !l.line.startsWith('CloudWatch')))
    out(`    not in the goal: ${line.line} ${usd(line.dollars)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('bench:cost failed (harness):', error);
    process.exit(1);
  },
);
