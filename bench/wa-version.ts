/**
 * `npm run bench:version` — when WhatsApp moves its minimum client version, how long the
 * connected accounts take to come back by themselves (docs/connector.md, "When WhatsApp moves").
 *
 * BENCH_ACCOUNTS (20) accounts linked on the sandbox (in a process of its own) through one
 * connector process. Then, for each kick kind: the sandbox raises the version it serves as
 * `sw.js` and the minimum it accepts by 1,000 revisions, and kicks every account's device:
 * `restart` (515: the next login follows at once) and `end` (a drop: the next login after the
 * drop backoff, about 5 s). Measured from the kick: the time until each account is connected
 * again, the logins the sandbox refused per account (an account whose next login came after the
 * connector had moved is not refused at all), and the `sw.js` reads the move cost.
 * The moves are 11 s apart: a connector resolves again at most once per 10 s.
 * Goals (issue "Stay linked when WhatsApp moves"): every account back within 2 minutes, at most 3
 * refused logins per account, one `sw.js` read per connector per move.
 */
import { loadavg } from 'node:os';
import { listAccounts } from '../core/store/accounts.js';
import { parseWaVersion, waVersionText } from '../core/wa-version.js';
import { spawnConnector } from '../test/e2e/support/child-connector.js';
import { waitFor } from '../test/support/wait.js';
import { linkAccounts, type BenchAccount } from './connector/link.js';
import { startSandboxStack } from './sandbox-stack.js';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 20);
const KICKS = ['restart', 'end'] as const;
const BACK_WITHIN_MS = 120_000;
/** The keeper's gap between two resolves after refused logins (connector/wa-version/wa-version-keeper.ts). */
const REFUSAL_GAP_MS = 10_000;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const met = (ok: boolean) => (ok ? 'MET' : 'NOT MET');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main() {
  console.log(`== client version benchmark: ${ACCOUNTS} accounts, one connector ==`);
  const { emulators, sandbox, env, config, table, queues, control } = await startSandboxStack();
  const connector = spawnConnector({ ...env, TABLE_NAME: config.TABLE_NAME });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.kill(sandbox.pid, 'SIGKILL');
      connector.process.kill('SIGKILL');
      process.exit(130);
    });
  }
  const report: string[] = [];
  try {
    const accounts: BenchAccount[] = Array.from({ length: ACCOUNTS }, (_, i) => ({ id: `moving${i}`, phone: String(15557100000 + i) }));
    const linkSeconds = await linkAccounts({ table, queues, control, connector }, accounts);
    console.log(`${ACCOUNTS} accounts linked in ${linkSeconds.toFixed(1)} s; load average ${loadavg()[0]?.toFixed(2)}`);
    const deviceOf = new Map<string, number>();
    for (const { id, phone } of accounts) {
      const [device] = (await control.devices(phone)).filter((d) => d.device !== 0);
      deviceOf.set(id, device?.device ?? -1);
    }

    let lastMoveAt = Number.NEGATIVE_INFINITY;
    for (const kind of KICKS) {
      // Each move measured on its own: a connector resolves again at most once per 10 s, so a
      // second move right after the first would wait for the end of that gap.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastMoveAt + REFUSAL_GAP_MS + 1_000 - Date.now())));
      const before = await control.versions();
      const current = parseWaVersion(before.current);
      if (!current) throw new Error(`the sandbox serves no version: ${before.current}`);
      const moved = waVersionText([current[0], current[1], current[2] + 1_000]);
      await control.setVersions({ current: moved, minimum: moved });
      const kickedAt = Date.now();
      lastMoveAt = kickedAt;
      await Promise.all(accounts.map(({ id, phone }) => control.kick(phone, deviceOf.get(id) ?? -1, kind)));
      const backAt = new Map<string, number>();
      await waitFor(
        `${ACCOUNTS} accounts back after the ${kind} kick`,
        async () => {
          for (const account of await listAccounts(table)) {
            // Down since the kick (refused, or dropped and back after the version had moved) and up again.
            const wentDown = (account.lastDisconnect?.at ?? 0) >= kickedAt;
            if (account.status === 'connected' && wentDown && !backAt.has(account._id)) backAt.set(account._id, Date.now() - kickedAt);
          }
          return backAt.size >= ACCOUNTS;
        },
        { timeoutMs: 300_000, intervalMs: 100 },
      );
      const after = await control.versions();
      const times = [...backAt.values()].sort((a, b) => a - b);
      const refusals = accounts.map(({ id, phone }) => {
        const key = `${phone}.${deviceOf.get(id)}`;
        return (after.refused[key] ?? 0) - (before.refused[key] ?? 0);
      });
      const announcedMoved = accounts.filter(({ id, phone }) => after.announced[`${phone}.${deviceOf.get(id)}`] === moved).length;
      const reads = after.swJsServed - before.swJsServed;
      const last = times[times.length - 1] ?? Number.NaN;
      report.push(
        `kick ${kind}: ${ACCOUNTS} accounts back in p50 ${seconds(percentile(times, 50))}, last ${seconds(last)} ` +
          `(goal < ${seconds(BACK_WITHIN_MS)}: ${met(last < BACK_WITHIN_MS)}); refused logins per account ` +
          `${Math.min(...refusals)}-${Math.max(...refusals)}, ${refusals.filter((n) => n > 0).length} refused at all (goal <= 3: ${met(Math.max(...refusals) <= 3)}); ` +
          `${announcedMoved}/${ACCOUNTS} announce ${moved}; sw.js read ${reads} time(s) (goal 1: ${met(reads === 1)})`,
      );
      console.log(report[report.length - 1]);
    }
  } finally {
    await connector.terminate();
    await sandbox.stop();
    await emulators.stop();
  }
  console.log('\n== summary ==');
  for (const line of report) console.log(line);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
