/**
 * `npm run bench:scale` — scale-out (docs/design.md, Scale-out) on the sandbox network, in one
 * run: BENCH_SCALE_ACCOUNTS (default 300) linked accounts, connector processes as ECS runs them
 * (connector/main.ts children, default lease timings), the API and the emulators in this
 * process, the sandbox in a child of its own, a webhook receiver here.
 *
 * 1. One connector links every account; a fresh single connector then resumes them all.
 * 2. Send latency with 1 connector: one warm-up send per account (Signal sessions), then
 *    BENCH_SCALE_SENDS sends through the API, from the accounts in turn to a phone, timed from
 *    the request to its 200.
 * 3. Two more connectors: once settled, accounts per connector and the spread; the same sends
 *    with 3 connectors.
 * 4. A fourth connector: the time from its start to the end of the rebalancing (accounts per
 *    connector unchanged for BENCH_SCALE_QUIET_MS, every account connected).
 * 5. SIGKILL of one connector: the time until every account is connected again on the others.
 * 6. Rolling restart of the three left, one at a time (SIGTERM, wait for the exit and for every
 *    account connected again on the two others: the hand-over time; start a replacement, wait
 *    until settled), while a client sends BENCH_SCALE_RATE texts/s through
 *    the API and phones send as many to the accounts: sends answered anything but 200, and
 *    inbound messages that never reached the webhook (each X-Webhook-Id counted once).
 *
 * Settled, everywhere: read from each connector's /metrics (wa_accounts_owned/connected).
 * It prints figures and goal lines and asserts nothing.
 */
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { destroyClients } from '../core/aws.js';
import { registerWebhook } from '../core/store/webhooks.js';
import { startApiServer } from '../functions/server.js';
import { waitFor } from '../test/support/wait.js';
import { linkAccounts, type BenchAccount } from './connector/link.js';
import { percentile } from './connector/measure.js';
import { deliverySummary, startCrashReceiver } from './crash/receiver.js';
import { restClient } from './crash/rest-client.js';
import { startSandboxStack } from './sandbox-stack.js';
import { Cluster, describeSpread } from './scale/cluster.js';
import { describeSends, sendRound, startSteadyLoad, type SendFigures } from './scale/traffic.js';

const ACCOUNTS = Number(process.env.BENCH_SCALE_ACCOUNTS ?? 300);
const SENDS = Number(process.env.BENCH_SCALE_SENDS ?? 200);
const SEND_CONCURRENCY = Number(process.env.BENCH_SCALE_SEND_CONCURRENCY ?? 1);
const RATE = Number(process.env.BENCH_SCALE_RATE ?? 5);
/** Longer than a balancing round (LEASE_RENEW_MS, 5 s): the shards move one round at a time. */
const QUIET_MS = Number(process.env.BENCH_SCALE_QUIET_MS ?? 12_000);
/** How long a step may take to settle before the bench reports it unsettled and goes on. */
const SETTLE_CAP_MS = Number(process.env.BENCH_SCALE_SETTLE_CAP_S ?? 240) * 1000;
const INBOUND_PHONES = 5;
const INBOUND_DRAIN_MS = 180_000;
const LINK_CONCURRENCY = 8;
const WARM_UP_CONCURRENCY = 8;
const silent = pino({ level: 'silent' });

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}`;
const met = (ok: boolean) => (ok ? 'MET' : 'NOT MET');

async function main() {
  const started = performance.now();
  const log = (text: string) => console.log(`[${seconds(performance.now() - started)}] ${text}`);
  console.log(`== scale benchmark: ${ACCOUNTS} accounts, ${SENDS} sends per latency step, ${RATE}/s during the rolling restart ==`);
  console.log(`start: ${load()}`);

  // The webhook receiver listens on 127.0.0.1.
  const { emulators, sandbox, env, config, clients, table, queues, control } = await startSandboxStack({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const receiver = await startCrashReceiver();
  await registerWebhook(table, receiver.url);
  const api = await startApiServer({ config, clients, logger: silent, port: 0, host: '127.0.0.1' });
  const rest = restClient(api.url);
  const cluster = new Cluster({ ...env, TABLE_NAME: config.TABLE_NAME, LOG_LEVEL: 'info' });
  // Interrupted: the 'exit' handlers (the cluster's) still run; the sandbox goes too.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.kill(sandbox.pid, 'SIGKILL');
      process.exit(130);
    });
  }

  const accounts: BenchAccount[] = Array.from({ length: ACCOUNTS }, (_, i) => ({ id: `scale${i}`, phone: String(15558000000 + i) }));
  const peer = '15559000000';
  const phones = Array.from({ length: INBOUND_PHONES }, (_, i) => String(15559000001 + i));
  const report: string[] = [];
  const out = (line: string) => {
    report.push(line);
    log(line);
  };
  /** Waits for the live connectors to settle; an unsettled step is reported, with the shard hand-overs meanwhile. */
  const settle = async (step: string) => {
    const before = { given: cluster.logged('shard given up'), lost: cluster.logged('shard lease lost to another connector') };
    const { snapshot, settled } = await cluster.waitSettled(ACCOUNTS, QUIET_MS, SETTLE_CAP_MS);
    const moves =
      `${cluster.logged('shard given up') - before.given} shards given up, ` +
      `${cluster.logged('shard lease lost to another connector') - before.lost} shard leases lost`;
    if (!settled) out(`${step}: NOT settled within ${seconds(SETTLE_CAP_MS)} (${moves} meanwhile); figures below from the last sample`);
    else out(`${step}: settled (${moves} meanwhile)`);
    return snapshot;
  };

  try {
    await control.createPhone(peer);
    for (const phone of phones) await control.createPhone(phone);

    // 1. Linked by one connector; then a fresh one resumes them (without the linking's garbage).
    const linker = await cluster.start();
    const linkSeconds = await linkAccounts({ table, queues, control, connector: linker, concurrency: LINK_CONCURRENCY }, accounts);
    await linker.terminate();
    const resumeStart = performance.now();
    await cluster.start();
    const alone = await settle('1 connector resuming');
    out(`${ACCOUNTS} accounts linked in ${linkSeconds.toFixed(1)} s; a fresh connector resumed them in ${seconds(alone.at - resumeStart)}`);

    // 2. Send latency with one connector.
    const warmUp = await sendRound(rest, accounts, peer, ACCOUNTS, WARM_UP_CONCURRENCY, 'warm-up');
    log(`warm-up (one send per account): ${describeSends(warmUp)}`);
    const one = await sendRound(rest, accounts, peer, SENDS, SEND_CONCURRENCY, 'one');
    out(`send latency, 1 connector: ${describeSends(one)}`);

    // 3. Three connectors.
    await Promise.all([cluster.start(), cluster.start()]);
    const three = await settle('3 connectors');
    out('accounts per connector, 3 connectors:');
    for (const line of describeSpread(three)) out(line);
    const threeSends = await sendRound(rest, accounts, peer, SENDS, SEND_CONCURRENCY, 'three');
    out(`send latency, 3 connectors: ${describeSends(threeSends)}`);
    const ratio = (p: number, a: SendFigures, b: SendFigures) => percentile(b.latencies, p) / percentile(a.latencies, p);
    const p50Ratio = ratio(50, one, threeSends);
    const p99Ratio = ratio(99, one, threeSends);
    out(
      `send latency 3 / 1 connectors: p50 ${p50Ratio.toFixed(2)}x, p99 ${p99Ratio.toFixed(2)}x ` +
        `(goal ≤ 1.2x: ${met(p50Ratio <= 1.2 && p99Ratio <= 1.2)})`,
    );

    // 4. A fourth connector receives its share.
    const fourthStart = performance.now();
    const fourth = await cluster.start();
    const startedAt = performance.now();
    const four = await settle('a fourth connector');
    const shareMs = four.at - fourthStart;
    out(
      `a fourth connector had its share ${seconds(shareMs)} after its start (process start ${seconds(startedAt - fourthStart)}; ` +
        `goal ≤ 60 s: ${met(shareMs <= 60_000)}); accounts per connector, 4 connectors:`,
    );
    for (const line of describeSpread(four)) out(line);

    // 5. SIGKILL of one: its accounts connected again on the others.
    // The one with the most accounts among those that were there before the fourth.
    const before = (await cluster.snapshot()).holdings.filter((h) => h.pid !== fourth.pid);
    const victimHeld = Math.max(...before.map((h) => h.owned));
    const victim = cluster.live().find((child) => child.pid === before.find((h) => h.owned === victimHeld)?.pid)!;
    const killedAt = performance.now();
    await victim.kill();
    const recoveredAt = await cluster.waitAllConnected(ACCOUNTS);
    const recoveryMs = recoveredAt - killedAt;
    out(
      `killed connector (SIGKILL, ${victimHeld} accounts): connected again after ${seconds(recoveryMs)} (goal ≤ 25 s: ${met(recoveryMs <= 25_000)})`,
    );
    const afterKill = await settle('after the kill');
    out('accounts per connector after the kill, 3 connectors:');
    for (const line of describeSpread(afterKill)) out(line);

    // 6. Rolling restart under traffic.
    const deliveredBefore = receiver.deliveries.length;
    const traffic = startSteadyLoad(rest, control, accounts, peer, phones, RATE);
    const rollingStart = performance.now();
    /** Per SIGTERM: from the signal until every account is connected again on the connectors left. */
    const handOvers: number[] = [];
    // A step that fails (a replacement that never serves its metrics) ends the restart; the traffic is counted anyway.
    try {
      for (const [index, leaving] of cluster.live().entries()) {
        const termAt = performance.now();
        const code = await leaving.terminate();
        const exitedAt = performance.now();
        const handedAt = await cluster.waitAllConnected(ACCOUNTS, SETTLE_CAP_MS);
        handOvers.push(handedAt - termAt);
        await cluster.start(SETTLE_CAP_MS);
        const settled = await settle(`rolling restart ${index + 1}/3`);
        log(
          `rolling restart ${index + 1}/3: exit ${code} after ${seconds(exitedAt - termAt)}, every account connected on the others ` +
            `${seconds(handedAt - termAt)} after the signal, replacement settled ${seconds(settled.at - exitedAt)} after the exit`,
        );
      }
    } catch (error) {
      out(`rolling restart aborted: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (handOvers.length > 0) {
      const worst = Math.max(...handOvers);
      out(
        `SIGTERM hand-over (signal to every account connected again on the others): ${handOvers.map(seconds).join(', ')} ` +
          `(goal ≤ 10 s: ${met(worst <= 10_000)})`,
      );
    }
    const rollingMs = performance.now() - rollingStart;
    const { sends, inboundIds, inboundNotAccepted } = await traffic.stop();
    const deliveredIds = () => deliverySummary(receiver.deliveries.slice(deliveredBefore), inboundIds).messageIds;
    await waitFor(`${inboundIds.size} inbound messages at the webhook`, () => deliveredIds().size === inboundIds.size, {
      timeoutMs: INBOUND_DRAIN_MS,
      intervalMs: 500,
    }).catch(() => undefined);
    const lost = inboundIds.size - deliveredIds().size;
    const { duplicates } = deliverySummary(receiver.deliveries.slice(deliveredBefore), inboundIds);
    out(`rolling restart of 3 connectors took ${seconds(rollingMs)}, at ${RATE} sends/s and ${RATE} inbound/s:`);
    out(`  sends: ${describeSends(sends)} (goal 0 failed: ${met(sends.failed === 0)})`);
    for (const failure of sends.failures) log(`  failed send ${failure}`);
    out(
      `  inbound: ${inboundIds.size} sent by the phones, lost ${lost} (goal 0: ${met(lost === 0)}), ` +
        `posted more than once ${duplicates}${inboundNotAccepted > 0 ? `, not accepted by the sandbox ${inboundNotAccepted}` : ''}`,
    );
    const final = await settle('after the rolling restart');
    out('accounts per connector after the rolling restart:');
    for (const line of describeSpread(final)) out(line);
  } finally {
    await cluster.killAll();
    const logDir = await cluster.saveLogs();
    console.log(`connector logs: ${logDir}`);
    await api.close();
    await receiver.stop();
    await sandbox.stop();
    destroyClients(clients);
    await emulators.stop();
  }

  console.log(`\n==== scale benchmark results (${ACCOUNTS} accounts, ${seconds(performance.now() - started)} in total) ====`);
  for (const line of report) console.log(line);
  console.log(`end: ${load()}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('bench:scale failed (harness):', error);
    process.exit(1);
  },
);
