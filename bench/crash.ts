/**
 * `npm run bench:crash`: the gateway's durability promises measured with the gateway process
 * (`npm start`'s entry: emulators on disk, API and connector in one process) killed or stopped
 * while it works, on the sandbox network. Every scenario runs `runs` times (default 3) on a
 * fresh gateway; settings in bench/crash/options.ts (flags or BENCH_CRASH_* variables).
 *
 * 1. inbound: a burst of 1,000 texts from a phone; SIGKILL after 300 reached the webhook
 *    receiver; restart on the same data; counts lost, stored-but-not-posted and duplicates.
 * 2. sends: 100 parallel API sends; SIGKILL after 40 answered; restart; 150 s later, what the
 *    phone received against what the calls answered, and what a call that got no answer (or
 *    "may have been delivered") answers when asked again with its Idempotency-Key.
 * 3. webhook outage: the receiver down for 180 s while texts arrive; time from its recovery to
 *    the first and the last delivery.
 * 4. stop time: SIGTERM to exit, with 0 and with 50 connected accounts.
 *
 * It prints figures and goal lines and asserts nothing: it exits 0 unless the harness itself
 * fails (a gateway that does not start, an account that does not link, a timeout of a setup step).
 */
import { printInbound, runInbound, type InboundRun } from './crash/inbound.js';
import { describeOptions, parseCrashOptions } from './crash/options.js';
import { printOutage, runOutage, type OutageRun } from './crash/outage.js';
import { printSends, runSends, type SendsRun } from './crash/sends.js';
import { createStage } from './crash/stage.js';
import { printStopTimes, runStopTimes, type StopRun } from './crash/stop-time.js';

async function main(): Promise<void> {
  const options = parseCrashOptions(process.argv.slice(2), process.env);
  console.log(`== crash benchmark ==\n${describeOptions(options)}`);
  const stage = await createStage(options);
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  const inbound: InboundRun[] = [];
  const sends: SendsRun[] = [];
  const outage: OutageRun[] = [];
  let stops: StopRun[] = [];
  try {
    for (const scenario of options.scenarios) {
      console.log(`\n-- ${scenario} (at ${elapsed()}) --`);
      for (let run = 1; scenario !== 'stop' && run <= options.runs; run++) {
        if (scenario === 'inbound') inbound.push(await runInbound(stage, run));
        if (scenario === 'sends') sends.push(await runSends(stage, run));
        if (scenario === 'outage') outage.push(await runOutage(stage, run));
        console.log(`  ${scenario} run ${run} done at ${elapsed()}`);
      }
      if (scenario === 'stop') stops = await runStopTimes(stage);
    }
  } finally {
    await stage.stop();
  }

  console.log(`\n==== crash benchmark results (${options.runs} run(s) each, ${elapsed()} in total) ====`);
  if (options.scenarios.includes('inbound')) printInbound(inbound);
  if (options.scenarios.includes('sends')) printSends(sends, options.sends.waitSeconds);
  if (options.scenarios.includes('outage')) printOutage(outage, options.outage);
  if (options.scenarios.includes('stop')) printStopTimes(stops);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('bench:crash failed (harness):', error);
    process.exit(1);
  },
);
