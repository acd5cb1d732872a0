/**
 * `npm run bench:pacing` — what paced sends cost (docs/sending.md#paced-sends). BENCH_ACCOUNTS
 * (200) linked accounts each send BENCH_SENDS (10) texts to a phone on the sandbox, first
 * unpaced (plain sends, all accounts at once), then paced (each account queues its sends with
 * `Prefer: respond-async`, a 200–400 ms gap, and they go out from the connector's pacer).
 * Prints, per send, the connector's CPU and its DynamoDB requests (paced against unpaced, from a
 * preloaded counter, bench/connector/sdk-call-counter.cjs), the accuracy of the gaps (the pause
 * kept since the last send ended against the one drawn, p50/p99, from the connector's log), and
 * the AWS requests per hour of the linked accounts left idle with empty queues (BENCH_IDLE_ACCOUNTS,
 * 1,000: accounts are linked up to that number, then BENCH_IDLE_SECONDS, 60, are counted with
 * pacing on and with it off; the queues' share is the difference, goal 0).
 *
 * The emulators and the sandbox run in processes of their own, the connector in a child process,
 * the API in this one.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { listAccounts } from '../core/store/accounts.js';
import { findOutbound } from '../core/store/outbound.js';
import { startApiServer } from '../functions/server.js';
import { spawnConnector } from '../test/e2e/support/child-connector.js';
import { waitFor } from '../test/support/wait.js';
import { cpuSecondsOf, inBatches, percentile, sleep } from './connector/measure.js';
import { type BenchAccount, linkAccounts } from './connector/link.js';
import { startSandboxStack } from './sandbox-stack.js';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 200);
const SENDS = Number(process.env.BENCH_SENDS ?? 10);
const IDLE_ACCOUNTS = Math.max(ACCOUNTS, Number(process.env.BENCH_IDLE_ACCOUNTS ?? 1_000));
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const GAP = { min: 200, max: 400 };
/** Accounts sending at once in the unpaced step (each one send after the other). */
const UNPACED_CONCURRENCY = 20;

const { emulators, sandbox, env, config, clients, table, queues, control } = await startSandboxStack({ WEBHOOK_ALLOW_PRIVATE: 'true' });
const api = await startApiServer({ config, clients, logger: pino({ level: 'silent' }), port: 0, host: '127.0.0.1' });
const sdkCallFile = join(await mkdtemp(join(tmpdir(), 'bench-pacing-')), 'counts.json');
const connector = spawnConnector(
  { ...env, TABLE_NAME: config.TABLE_NAME, LOG_LEVEL: 'info', SDK_CALL_COUNT_FILE: sdkCallFile },
  ['--require', fileURLToPath(new URL('./connector/sdk-call-counter.cjs', import.meta.url))],
  { keepLines: 200_000 },
);
/** The connector's AWS requests so far, by command (the counter rewrites its file twice a second). */
const sdkCalls = async (): Promise<Record<string, number>> => {
  await sleep(1_100);
  try {
    return JSON.parse(await readFile(sdkCallFile, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
};
const DYNAMO = /Item|Query|Scan|Command$/;
const dynamoRequests = (calls: Record<string, number>) =>
  Object.entries(calls)
    .filter(([name]) => DYNAMO.test(name) && !/Message|Queue/.test(name))
    .reduce((sum, [, count]) => sum + count, 0);
const allRequests = (calls: Record<string, number>) => Object.values(calls).reduce((sum, count) => sum + count, 0);
const diff = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([name, count]) => [name, count - (before[name] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const to = '15550990000@s.whatsapp.net';
const accountsUpTo = (count: number): BenchAccount[] =>
  Array.from({ length: count }, (_, i) => ({ id: `pace${i}`, phone: `1555099${String(i + 1).padStart(4, '0')}` }));

try {
  await connector.waitForLine('the connector to start', (l) => l.msg === 'connector started', 120_000);
  await control.createPhone('15550990000');
  const accounts = accountsUpTo(ACCOUNTS);
  const linkedIn = await linkAccounts({ table, queues, control, connector }, accounts);
  console.log(`${ACCOUNTS} accounts linked in ${linkedIn.toFixed(0)} s`);

  // Unpaced: every account sends its texts one after the other, UNPACED_CONCURRENCY accounts at once.
  let cpu = cpuSecondsOf(connector.pid);
  let calls = await sdkCalls();
  let started = performance.now();
  await inBatches(accounts, UNPACED_CONCURRENCY, async ({ id }) => {
    for (let i = 0; i < SENDS; i++) {
      const answer = await call('POST', `/accounts/${id}/message/send`, { to, message: `unpaced ${i}` });
      if (answer.status !== 200) throw new Error(`unpaced send answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
  });
  const total = ACCOUNTS * SENDS;
  const unpaced = {
    seconds: (performance.now() - started) / 1000,
    cpuMs: ((cpuSecondsOf(connector.pid) - cpu) * 1000) / total,
    calls: diff(await sdkCalls(), calls),
  };

  // Paced: each account queues its texts at once (async), and the pacer sends them in turn.
  const settings = { sendPolicy: { enabled: true, gapMs: GAP, typing: false, warmup: false, perMinute: 100 } };
  await inBatches(accounts, UNPACED_CONCURRENCY, async ({ id }) => {
    const answer = await call('PATCH', `/accounts/${id}/settings`, settings);
    if (answer.status !== 200) throw new Error(`PATCH answered ${answer.status}`);
  });
  // The connector has read the new settings of every account before the sends (settings_changed).
  await waitFor(
    'the settings applied',
    () => connector.lines.filter((l) => l.msg === 'command done' && l.command === 'settings_changed').length >= ACCOUNTS,
    { timeoutMs: 120_000, intervalMs: 200 },
  );
  cpu = cpuSecondsOf(connector.pid);
  calls = await sdkCalls();
  started = performance.now();
  const queued: { accountId: string; messageId: string }[] = [];
  // An account's sends at once, so that they wait in its queue (a send that comes after the one
  // ahead of it ended has no gap to measure).
  await inBatches(accounts, UNPACED_CONCURRENCY, async ({ id }) => {
    await Promise.all(
      Array.from({ length: SENDS }, async (_, i) => {
        const answer = await call('POST', `/accounts/${id}/message/send`, { to, message: `paced ${i}` }, { prefer: 'respond-async' });
        if (answer.status !== 202) throw new Error(`async send answered ${answer.status}: ${JSON.stringify(answer.body)}`);
        queued.push({ accountId: id, messageId: String(answer.body.messageId) });
      }),
    );
  });
  const handed = () => connector.lines.filter((l) => l.msg === 'paced send handed to WhatsApp');
  await waitFor(`${total} paced sends`, () => handed().length >= total, { timeoutMs: 600_000, intervalMs: 500 });
  const pacedSeconds = (performance.now() - started) / 1000;
  const paced = { cpuMs: ((cpuSecondsOf(connector.pid) - cpu) * 1000) / total, calls: diff(await sdkCalls(), calls) };
  const notSent = [];
  for (const { accountId, messageId } of queued.slice(0, 50)) {
    if ((await findOutbound(table, accountId, messageId))?.status !== 'sent') notSent.push(messageId);
  }
  const errors = handed()
    .filter((l) => l.gapMs !== undefined)
    .map((l) => Number(l.gapMs) - Number(l.gapDrawnMs))
    .sort((a, b) => a - b);

  console.log(`\n${ACCOUNTS} accounts × ${SENDS} sends (${total}):`);
  const perSend = (name: string, step: { cpuMs: number; calls: Record<string, number> }, seconds: number) =>
    console.log(
      `  ${name}: ${seconds.toFixed(1)} s; connector per send: ${step.cpuMs.toFixed(2)} ms CPU, ` +
        `${(dynamoRequests(step.calls) / total).toFixed(2)} DynamoDB requests, ${(allRequests(step.calls) / total).toFixed(2)} AWS requests ` +
        `(${Object.entries(step.calls)
          .map(([name, count]) => `${name.replace(/Command$/, '')} ${(count / total).toFixed(2)}`)
          .join(', ')})`,
    );
  perSend('unpaced (plain sends)', unpaced, unpaced.seconds);
  perSend('paced (async, 200-400 ms gaps)', paced, pacedSeconds);
  console.log(
    `  gap kept minus gap drawn (${errors.length} gaps): p50 ${percentile(errors, 50)} ms, p99 ${percentile(errors, 99)} ms, ` +
      `min ${errors[0]} ms, max ${errors[errors.length - 1]} ms; first 50 queued sends not 'sent': ${notSent.length}`,
  );

  // Idle: every linked account with an empty queue, pacing on and then off, counted alike.
  if (IDLE_ACCOUNTS > ACCOUNTS) {
    const more = accountsUpTo(IDLE_ACCOUNTS).slice(ACCOUNTS);
    const moreIn = await linkAccounts({ table, queues, control, connector }, more);
    console.log(`\n${more.length} more accounts linked in ${moreIn.toFixed(0)} s`);
  }
  const idle = async (pacing: boolean) => {
    const all = (await listAccounts(table)).map((a) => a._id);
    await inBatches(all, UNPACED_CONCURRENCY, async (id) => {
      await call('PATCH', `/accounts/${id}/settings`, { sendPolicy: { enabled: pacing } });
    });
    // The settings commands done and the connector quiet again before the window opens.
    await sleep(5_000);
    const before = await sdkCalls();
    await sleep(IDLE_SECONDS * 1000);
    const window = diff(await sdkCalls(), before);
    const perHour = (count: number) => Math.round((count * 3600) / IDLE_SECONDS);
    console.log(
      `  idle, pacing ${pacing ? 'on ' : 'off'}: ${perHour(allRequests(window))} AWS requests/hour for the connector ` +
        `(${Object.entries(window)
          .map(([name, count]) => `${name.replace(/Command$/, '')} ${perHour(count)}`)
          .join(', ')})`,
    );
    return perHour(allRequests(window));
  };
  console.log(`\n${IDLE_ACCOUNTS} linked accounts idle, empty queues, ${IDLE_SECONDS} s each:`);
  const on = await idle(true);
  const off = await idle(false);
  console.log(`  the queues' share: ${on - off} requests/hour (goal 0; the rest is the connector's own loops, the same either way)`);
} finally {
  await connector.terminate();
  await api.close();
  await sandbox.stop();
  await emulators.stop();
}
