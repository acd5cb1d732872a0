/**
 * The message traffic of bench:cost, at a steady rate: texts from sandbox phones to the accounts
 * (each counted once at the webhook receiver), and text sends through the API (each timed to
 * its answer). Every phone and account pair talked once before (`warmUp`), so the figures are
 * those of contacts that already talk, not of first contacts.
 */
import type { SandboxControl } from '../../test/e2e/support/sandbox-control.js';
import { waitFor } from '../../test/support/wait.js';
import type { BenchAccount } from '../connector/link.js';
import { inBatches, percentile, sleep } from '../connector/measure.js';
import type { CrashReceiver } from '../crash/receiver.js';
import type { RestClient } from '../crash/rest-client.js';

export interface Pair {
  account: BenchAccount;
  /** A sandbox phone that is no account. */
  phone: string;
}

const jid = (phone: string) => `${phone}@s.whatsapp.net`;
const DRAIN_MS = 180_000;

/** Calls `each(k)` for k = 0..count-1, one every 1/rate s (not waiting for the calls), and awaits them all. */
async function atRate(count: number, rate: number, each: (k: number) => Promise<void>): Promise<void> {
  const start = performance.now();
  const calls: Promise<void>[] = [];
  for (let k = 0; k < count; k++) {
    const due = start + (k * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    calls.push(each(k));
  }
  await Promise.all(calls);
}

/** One text each way per pair, answered and posted, before anything is measured. */
export async function warmUp(pairs: Pair[], control: SandboxControl, rest: RestClient, receiver: CrashReceiver): Promise<void> {
  const before = receiver.deliveries.length;
  await inBatches(pairs, 4, async ({ account, phone }) => {
    await control.sendFromPhone(phone, jid(account.phone), 'hello');
    const sent = await rest.sendText(account.id, jid(phone), 'hello back');
    if (!('status' in sent) || sent.status !== 200) throw new Error(`warm-up send of ${account.id} failed: ${JSON.stringify(sent)}`);
  });
  await waitFor('the warm-up texts at the webhook', () => receiver.deliveries.length - before >= pairs.length, { timeoutMs: DRAIN_MS });
}

/** `count` texts from the phones to their accounts at `rate`/s; resolves once every one was posted to the webhook. */
export async function receiveTexts(pairs: Pair[], control: SandboxControl, receiver: CrashReceiver, count: number, rate: number) {
  const ids = new Set<string>();
  await atRate(count, rate, async (k) => {
    const { account, phone } = pairs[k % pairs.length] as Pair;
    ids.add((await control.sendFromPhone(phone, jid(account.phone), `text ${k}`)).id);
  });
  const posted = () => new Set(receiver.deliveries.map((d) => d.messageId).filter((id) => ids.has(id))).size;
  await waitFor(`${count} texts at the webhook`, () => posted() === ids.size, { timeoutMs: DRAIN_MS, intervalMs: 200 });
}

/** `count` API text sends from the accounts to their phones at `rate`/s; the answers' latencies (ms), failures thrown. */
export async function sendTexts(pairs: Pair[], rest: RestClient, count: number, rate: number): Promise<{ p50: number; mean: number }> {
  const latencies: number[] = [];
  const failures: string[] = [];
  await atRate(count, rate, async (k) => {
    const { account, phone } = pairs[k % pairs.length] as Pair;
    const t0 = performance.now();
    const sent = await rest.sendText(account.id, jid(phone), `send ${k}`);
    if ('status' in sent && sent.status === 200) latencies.push(sent.at - t0);
    else failures.push(JSON.stringify(sent));
  });
  if (failures.length > 0) throw new Error(`${failures.length} sends failed, e.g. ${failures[0]}`);
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), mean: latencies.reduce((a, b) => a + b, 0) / latencies.length };
}
