/**
 * The traffic of bench:scale: text sends through the API (`POST /accounts/:id/message/send`,
 * timed from the request to its answer; anything but 200 is a failed send), and texts from
 * sandbox phones to the accounts, counted at the webhook receiver.
 */
import type { SandboxControl } from '../../test/e2e/support/sandbox-control.js';
import { inBatches, percentile, sleep } from '../connector/measure.js';
import type { BenchAccount } from '../connector/link.js';
import type { SendOutcome, RestClient } from '../crash/rest-client.js';

export interface SendFigures {
  /** Latencies of the sends answered 200, ascending, in ms. */
  latencies: number[];
  failed: number;
  /** Each failure (status and detail, or the network error; when, for the steady load), for the report. */
  failures: string[];
}

const jid = (phone: string) => `${phone}@s.whatsapp.net`;

interface Timed {
  outcome: SendOutcome;
  /** performance.now() at the request. */
  t0: number;
  ms: number;
}

async function timedSend(rest: RestClient, accountId: string, to: string, text: string): Promise<Timed> {
  const t0 = performance.now();
  const outcome: SendOutcome = await rest.sendText(accountId, to, text);
  return { outcome, t0, ms: outcome.at - t0 };
}

/** `origin`: performance.now() the failures' request times are counted from. */
function collect(results: Timed[], origin = 0): SendFigures {
  const ok = results.filter(({ outcome }) => 'status' in outcome && outcome.status === 200);
  const bad = results.filter(({ outcome }) => !('status' in outcome) || outcome.status !== 200);
  return {
    latencies: ok.map(({ ms }) => ms).sort((a, b) => a - b),
    failed: bad.length,
    failures: bad.map(
      ({ outcome, t0 }) =>
        `${origin ? `at ${((t0 - origin) / 1000).toFixed(1)} s: ` : ''}` +
        ('status' in outcome ? `HTTP ${outcome.status}${outcome.detail ? ` ${outcome.detail}` : ''}` : outcome.error),
    ),
  };
}

/**
 * `count` sends from the accounts in turn to `peer`, `concurrency` at a time. The first send of
 * each account sets up its Signal session with the peer: run one round over every account first
 * (`label` 'warm-up') so that the measured rounds compare like with like.
 */
export async function sendRound(
  rest: RestClient,
  accounts: BenchAccount[],
  peer: string,
  count: number,
  concurrency: number,
  label: string,
): Promise<SendFigures> {
  const results: Timed[] = [];
  const jobs = Array.from({ length: count }, (_, i) => i);
  await inBatches(jobs, concurrency, async (i) => {
    results.push(await timedSend(rest, accounts[i % accounts.length]!.id, jid(peer), `scale ${label} ${i}`));
  });
  return collect(results);
}

export function describeSends(figures: SendFigures): string {
  const { latencies, failed } = figures;
  const failures = failed > 0 ? ` (first ${Math.min(5, failed)}: ${figures.failures.slice(0, 5).join('; ')})` : '';
  return (
    `p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, ` +
    `max ${(latencies.at(-1) ?? Number.NaN).toFixed(0)} ms over ${latencies.length} sends; failed ${failed}${failures}`
  );
}

export interface SteadyLoad {
  /** Stops offering; resolves once every send has answered. */
  stop(): Promise<{ sends: SendFigures; inboundIds: Set<string>; inboundNotAccepted: number }>;
}

/**
 * A client sending `rate` texts/s through the API (from the accounts in turn to `peer`) and
 * `phones` sending `rate` texts/s in all to the accounts in turn, until stopped. Both keep a
 * fixed schedule whatever the answers take (calls overlap when they are slow).
 */
export function startSteadyLoad(
  rest: RestClient,
  control: SandboxControl,
  accounts: BenchAccount[],
  peer: string,
  phones: string[],
  rate: number,
): SteadyLoad {
  let running = true;
  const sends: Promise<Timed>[] = [];
  const inbound: Promise<string | undefined>[] = [];
  const started = performance.now();
  const loop = (async () => {
    for (let i = 0; running; i++) {
      await sleep(Math.max(0, started + (i * 1000) / rate - performance.now()));
      if (!running) break;
      const account = accounts[i % accounts.length]!;
      sends.push(timedSend(rest, account.id, jid(peer), `scale rolling ${i}`));
      inbound.push(
        control.sendFromPhone(phones[i % phones.length]!, account.phone, `scale inbound ${i}`).then(
          ({ id }) => id,
          () => undefined,
        ),
      );
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const ids = await Promise.all(inbound);
      const accepted = ids.filter((id): id is string => id !== undefined);
      return {
        sends: collect(await Promise.all(sends), started),
        inboundIds: new Set(accepted),
        inboundNotAccepted: ids.length - accepted.length,
      };
    },
  };
}
