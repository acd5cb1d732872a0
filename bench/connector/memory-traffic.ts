/**
 * Memory with traffic, a step of `bench:connector`. Idle accounts that never talked to anyone are
 * the easy case: here every account first exchanges messages with CONTACTS distinct contacts
 * (each contact sends it a text, the account answers through a send command: a Signal session
 * each way with every contact), then sits in 3 groups (bench/connector/traffic-groups.ts: it
 * creates one with two other accounts and two contacts and sends to it, and is a member of two
 * more), then the connector idles and its RSS is read, 15 s and 60 s after the traffic (the
 * garbage of the exchange is given back in between); per account = (RSS - RSS of the empty
 * connector) / accounts.
 *
 * The soak (BENCH_SOAK_MINUTES, off by default; the issue's figure is 30) then offers a steady
 * 20 messages/s from the contacts to the accounts and samples RSS every 30 s: growth from minute
 * 5 to the end is what a leak would show (from the first sample when the soak is shorter).
 */
import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import { newCommandId, newMessageId } from '../../core/ids.js';
import type { Queues } from '../../core/queues.js';
import { findOutbound, putPendingOutbound } from '../../core/store/outbound.js';
import type { Table } from '../../core/store/table.js';
import type { SandboxControl } from '../../test/e2e/support/sandbox-control.js';
import { waitFor } from '../../test/support/wait.js';
import { heapSnapshot, inBatches, MB, memoryByKind, rssByMapping, rssOf, sleep } from './measure.js';
import { GROUPS_PER_ACCOUNT, joinGroups } from './traffic-groups.js';

/** Distinct contacts per account (the same phones for every account). */
const CONTACTS = 20;
const CONTACT_BASE = 15555000000;
const CONCURRENCY = 40;
/** Answers in flight at once (queued, not yet sent) and the deadline each gets. */
const ANSWER_CONCURRENCY = 200;
const ANSWER_DEADLINE_MS = 600_000;
const SETTLE_MS = 15_000;
/** A second reading after a longer idle: V8 gives back the traffic's garbage over tens of seconds. */
const LONG_SETTLE_MS = 60_000;
/** A third one: the idle collector checks every 30 s, and the first check after the traffic still saw some of it. */
const LAST_SETTLE_MS = 120_000;
const SOAK_SAMPLE_MS = 30_000;

export interface TrafficContext {
  /** For the API the groups are created through. */
  config: Config;
  clients: AwsClients;
  table: Table;
  queues: Queues;
  control: SandboxControl;
  /** The phone number of account `index` (its id is `bench<index>`). */
  phoneOf: (index: number) => string;
  /** The connector process now (it is restarted between steps). */
  connectorPid: () => number;
  /** Its /metrics URL. */
  connectorMetricsUrl: () => Promise<string>;
  /** Message ids the webhook receiver got. */
  delivered: { has(messageId: string): boolean };
  /** RSS of the connector with no account. */
  baselineRss: number;
  /** Where the connector writes a heap snapshot on SIGUSR2 (BENCH_HEAP_SNAPSHOT), taken after the RSS readings. */
  heapSnapshotDir?: string;
}

const contactPhones = Array.from({ length: CONTACTS }, (_, c) => String(CONTACT_BASE + c));
let contactsCreated = false;
/** Accounts `bench0` .. `bench<grouped - 1>` already sit in their groups. */
let grouped = 0;

/** Every account of `accounts` exchanges a message each way with every contact; answers the RSS per account after idling. */
export async function measureMemoryWithTraffic(ctx: TrafficContext, accounts: number): Promise<string> {
  if (!contactsCreated) {
    for (const [c, phone] of contactPhones.entries()) await ctx.control.createPhone(phone, `Contact ${c}`);
    contactsCreated = true;
  }
  const pairs = Array.from({ length: accounts * CONTACTS }, (_, i) => ({ account: Math.floor(i / CONTACTS), contact: i % CONTACTS }));
  const started = performance.now();

  const inbound: string[] = [];
  await inBatches(pairs, CONCURRENCY, async ({ account, contact }) => {
    const { id } = await ctx.control.sendFromPhone(contactPhones[contact]!, ctx.phoneOf(account), `hello ${account} ${contact}`);
    inbound.push(id);
  });
  await waitFor(`${inbound.length} inbound webhooks`, () => inbound.every((id) => ctx.delivered.has(id)), {
    timeoutMs: 1_800_000,
    intervalMs: 500,
  });

  console.log(
    `${accounts} accounts: ${inbound.length} inbound from contacts delivered after ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  // Each answer is queued and awaited in turn, ANSWER_CONCURRENCY at a time, so that its deadline
  // starts when it is queued: all 20,000 queued at once at 1,000 accounts outlived their deadline.
  let failed = 0;
  let answered = 0;
  await inBatches(pairs, ANSWER_CONCURRENCY, async ({ account, contact }) => {
    const accountId = `bench${account}`;
    const ids = { messageId: newMessageId(), commandId: newCommandId() };
    await putPendingOutbound(ctx.table, accountId, ids, Date.now() + ANSWER_DEADLINE_MS);
    await ctx.queues.sendCommand({
      type: 'send_text',
      accountId,
      commandId: ids.commandId,
      payload: { messageId: ids.messageId, to: `${contactPhones[contact]}@s.whatsapp.net`, text: `hi ${contact}` },
    });
    const status = await waitFor(
      `send ${ids.messageId} done`,
      async () => {
        const status = (await findOutbound(ctx.table, accountId, ids.messageId, false))?.status;
        return status === 'sent' || status === 'failed' || status === 'unknown' ? status : undefined;
      },
      { timeoutMs: ANSWER_DEADLINE_MS + 60_000, intervalMs: 2_000 },
    );
    answered += 1;
    if (status !== 'sent') failed += 1;
  });
  const exchangeSeconds = (performance.now() - started) / 1000;
  console.log(`${accounts} accounts: ${answered} sends to contacts done after ${exchangeSeconds.toFixed(0)} s`);
  const groups = await joinGroups({ ...ctx, contacts: contactPhones, from: grouped, to: accounts });
  grouped = accounts;

  await sleep(SETTLE_MS);
  const rss = rssOf(ctx.connectorPid());
  await sleep(LONG_SETTLE_MS - SETTLE_MS);
  const settledRss = rssOf(ctx.connectorPid());
  await sleep(LAST_SETTLE_MS - LONG_SETTLE_MS);
  const lastRss = rssOf(ctx.connectorPid());
  const memory = await memoryByKind(await ctx.connectorMetricsUrl());
  const mappings = rssByMapping(ctx.connectorPid());
  const perAccount = (bytes: number) => `${(bytes / MB).toFixed(1)} MB (${(bytes / accounts / MB).toFixed(2)} per account)`;
  console.log(
    `${accounts} accounts, where the RSS goes after ${LAST_SETTLE_MS / 1000} s: V8 heap reserved ${perAccount(memory.heap_total ?? 0)}, ` +
      `in use ${perAccount(memory.heap_used ?? 0)} (live data and garbage not collected yet), ` +
      `outside it (Buffers and the like) ${perAccount(memory.external ?? 0)}; ` +
      `RSS by mapping: anonymous ${perAccount(mappings.anonymous)} (V8's heap pages among them), malloc's main heap ` +
      `${perAccount(mappings.brk)}, files ${(mappings.files / MB).toFixed(1)} MB, stacks ${(mappings.stacks / MB).toFixed(1)} MB. ` +
      `Event loop busy ${((memory.event_loop_busy_share ?? 0) * 100).toFixed(1)}% of the last 30 s. ` +
      `Idle collections so far: ${memory.idle_collections ?? 0}` +
      `${memory.idle_collections ? `, ${(((memory.idle_collection_seconds ?? 0) / memory.idle_collections) * 1000).toFixed(0)} ms each on average` : ''}`,
  );
  if (ctx.heapSnapshotDir) {
    const file = await heapSnapshot(ctx.connectorPid(), ctx.heapSnapshotDir);
    // The snapshot begins with a full collection: what V8 then gives back is garbage it had kept.
    const afterCollection = await memoryByKind(await ctx.connectorMetricsUrl());
    const mappingsAfter = rssByMapping(ctx.connectorPid());
    console.log(
      `${accounts} accounts: heap snapshot ${file}; after its full collection RSS ${(rssOf(ctx.connectorPid()) / MB).toFixed(1)} MB, ` +
        `V8 heap reserved ${perAccount(afterCollection.heap_total ?? 0)}, in use ${perAccount(afterCollection.heap_used ?? 0)}, ` +
        `outside it ${perAccount(afterCollection.external ?? 0)}; anonymous mappings ${perAccount(mappingsAfter.anonymous)}, ` +
        `malloc's main heap ${perAccount(mappingsAfter.brk)}`,
    );
  }
  const reading = (bytes: number, afterMs: number) =>
    `${(bytes / MB).toFixed(1)} MB, ${((bytes - ctx.baselineRss) / accounts / MB).toFixed(2)} MB per active account after ${afterMs / 1000} s`;
  return (
    `${String(accounts).padStart(4)} accounts, each after ${CONTACTS} contacts (${pairs.length} in, ${pairs.length} out` +
    `${failed ? `, ${failed} sends not sent` : ''}, ${exchangeSeconds.toFixed(0)} s) and in ${GROUPS_PER_ACCOUNT} groups ` +
    `(${groups.groups} created and sent to${groups.failed ? `, ${groups.failed} creations or sends failed, first: ${groups.firstError}` : ''}, ` +
    `${groups.seconds.toFixed(0)} s): RSS ${reading(rss, SETTLE_MS)}; ${reading(settledRss, LONG_SETTLE_MS)}; ${reading(lastRss, LAST_SETTLE_MS)}`
  );
}

/** Steady inbound traffic at `rate` messages/s for `minutes`; answers the RSS samples and the growth. */
export async function soak(ctx: TrafficContext, accounts: number, minutes: number, rate = 20): Promise<string[]> {
  const rows: string[] = [];
  const samples: { minute: number; rss: number }[] = [];
  const started = performance.now();
  const endAt = started + minutes * 60_000;
  const sent: string[] = [];
  let stop = false;
  const sampler = (async () => {
    while (!stop) {
      await sleep(SOAK_SAMPLE_MS);
      const minute = (performance.now() - started) / 60_000;
      samples.push({ minute, rss: rssOf(ctx.connectorPid()) });
      rows.push(`  soak minute ${minute.toFixed(1)}: RSS ${(samples.at(-1)!.rss / MB).toFixed(1)} MB`);
      console.log(rows.at(-1));
    }
  })();
  let n = 0;
  const senders: Promise<void>[] = [];
  while (performance.now() < endAt) {
    const i = n++;
    await sleep(Math.max(0, started + (i * 1000) / rate - performance.now()));
    senders.push(
      ctx.control.sendFromPhone(contactPhones[i % CONTACTS]!, ctx.phoneOf(i % accounts), `soak ${i}`).then(({ id }) => {
        sent.push(id);
      }),
    );
  }
  await Promise.all(senders);
  stop = true;
  await sampler;
  const delivered = sent.filter((id) => ctx.delivered.has(id)).length;
  const from = samples.find((s) => s.minute >= 5) ?? samples[0];
  const last = samples.at(-1);
  if (from && last) {
    rows.push(
      `soak ${minutes} min at ${rate} msg/s over ${accounts} accounts: ${sent.length} sent, ${delivered} delivered by the end; ` +
        `RSS ${(from.rss / MB).toFixed(1)} MB at minute ${from.minute.toFixed(1)} -> ${(last.rss / MB).toFixed(1)} MB at minute ` +
        `${last.minute.toFixed(1)} (${(((last.rss - from.rss) / from.rss) * 100).toFixed(1)}%; goal: at most +10% from minute 5 to 30)`,
    );
  }
  return rows;
}
