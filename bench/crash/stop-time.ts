/**
 * Scenario 4, stop time: SIGTERM to the gateway process (what `npm start` runs) and the time
 * until it exits, idle with no account and with `accounts` connected accounts. The accounts are
 * linked once through the API; each measured run is a fresh process that resumed them from its
 * data, so every run stops the same state.
 */
import type { ExitReport } from './gateway-process.js';
import { inParallel, poll } from './poll.js';
import { linkAccount, startGateway, type RunningGateway, type Stage } from './stage.js';

const CONNECTOR_START_TIMEOUT_MS = 60_000;
const RESUME_TIMEOUT_MS = 600_000;

export interface StopRun {
  accounts: number;
  exit: ExitReport;
}

/**
 * Ready to be stopped: the stack has logged its start-up summary (`ready`, after which its signal
 * handlers are set), and `accounts` are connected.
 */
async function whenReady(gateway: RunningGateway, accounts: number): Promise<void> {
  await gateway.process
    .waitForLine('the stack to be ready', (l) => l.msg === 'ready', { timeoutMs: CONNECTOR_START_TIMEOUT_MS })
    .catch(() => console.log('  (no "ready" line within 60 s; stopping anyway)'));
  if (accounts === 0) return;
  await poll(
    `${accounts} accounts connected`,
    async () => {
      if (!gateway.process.isRunning()) throw new Error('the gateway exited while resuming its accounts');
      return (await gateway.rest.connectedAccounts()) >= accounts;
    },
    { timeoutMs: RESUME_TIMEOUT_MS, intervalMs: 1_000 },
  );
}

export async function runStopTimes(stage: Stage): Promise<StopRun[]> {
  const { accounts, linkConcurrency, capSeconds } = stage.options.stop;
  const results: StopRun[] = [];
  const measure = async (home: Awaited<ReturnType<Stage['newHome']>>, count: number) => {
    for (let run = 1; run <= stage.options.runs; run++) {
      const gateway = await startGateway(home);
      try {
        await whenReady(gateway, count);
      } catch (error) {
        await gateway.process.kill();
        throw error;
      }
      const exit = await gateway.process.terminate(capSeconds * 1000);
      results.push({ accounts: count, exit });
      console.log(`  stop with ${count} accounts, run ${run}: ${describeExit(exit)}`);
    }
  };

  await measure(await stage.newHome('stop0'), 0);
  if (accounts > 0) {
    const home = await stage.newHome(`stop${accounts}`);
    const linking = await startGateway(home);
    try {
      const started = performance.now();
      await inParallel(
        Array.from({ length: accounts }, (_, i) => i),
        linkConcurrency,
        async (i) => linkAccount(stage, linking, `stop${i}`, await stage.newPhone()),
      );
      console.log(`  linked ${accounts} accounts in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } finally {
      const exit = await linking.process.terminate(capSeconds * 1000);
      console.log(`  (the process that linked them stopped: ${describeExit(exit)}; not counted)`);
    }
    await measure(home, accounts);
  }
  return results;
}

function describeExit(exit: ExitReport): string {
  const how = exit.killedAfterCap ? 'did not exit, SIGKILLed at the cap' : `exit code ${exit.code ?? exit.signal}`;
  return `${(exit.ms / 1000).toFixed(2)} s (${how})`;
}

export function printStopTimes(runs: StopRun[]): void {
  console.log('\n== 4. stop time: SIGTERM to exit ==');
  for (const count of [...new Set(runs.map((r) => r.accounts))]) {
    const mine = runs.filter((r) => r.accounts === count);
    console.log(`${count} connected accounts: ${mine.map((r) => describeExit(r.exit)).join('; ')}`);
  }
}
