/**
 * `npm run bench:history` — importing a big history (docs/history.md). A sandbox phone with
 * BENCH_HISTORY_CHATS (2,000) chats of BENCH_HISTORY_PER_CHAT (25) messages each (50,000),
 * spread over two years, links to an account whose `settings.history` is `full`: the phone pushes
 * RECENT (the last 90 days) then FULL (the rest) after the link. Prints the import's time (link
 * to the last chunk stored), the connector's DynamoDB requests per imported message (from a
 * preloaded counter, bench/connector/sdk-call-counter.cjs) and the write units per message
 * (the items the import left, each ceil(size / 1 KB)), the connector's peak RSS during the import
 * and its RSS after, and the latency of BENCH_HISTORY_LIVE (100) live messages from another
 * phone to the same account (sent to its webhook) during the import against the same after it.
 *
 * The emulators run in this process, the sandbox and the connector in processes of their own.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { accountPartition } from '../core/keys.js';
import { newCommandId } from '../core/ids.js';
import { createAccount } from '../core/store/accounts.js';
import { queryPartition } from '../core/store/paging.js';
import { registerWebhook } from '../core/store/webhooks.js';
import { defaultSettings } from '../core/schemas/settings.js';
import { spawnConnector } from '../test/e2e/support/child-connector.js';
import { startWebhookReceiver } from '../test/support/webhook-receiver.js';
import { waitFor } from '../test/support/wait.js';
import { MB, percentile, rssOf, sleep } from './connector/measure.js';
import { startSandboxStack } from './sandbox-stack.js';

const CHATS = Number(process.env.BENCH_HISTORY_CHATS ?? 2_000);
const PER_CHAT = Number(process.env.BENCH_HISTORY_PER_CHAT ?? 25);
const LIVE = Number(process.env.BENCH_HISTORY_LIVE ?? 100);
/** Between two live messages: a steady trickle, not a burst. */
const LIVE_GAP_MS = 50;
const TOTAL = CHATS * PER_CHAT;

const account = { id: 'histbench', phone: '15550980001' };
const sender = '15550980002';

const { emulators, sandbox, env, config, table, queues, control } = await startSandboxStack({ WEBHOOK_ALLOW_PRIVATE: 'true' });
/** When each live message reached the webhook (Unix ms, by message id). */
const arrived = new Map<string, number>();
const receiver = await startWebhookReceiver((post) => {
  const body = post.body as { event?: string; messageId?: string };
  if (body.event === 'message' && body.messageId) arrived.set(body.messageId, Date.now());
  return 200;
});
const sdkCallFile = join(await mkdtemp(join(tmpdir(), 'bench-history-')), 'counts.json');
const connector = spawnConnector(
  { ...env, TABLE_NAME: config.TABLE_NAME, LOG_LEVEL: 'info', SDK_CALL_COUNT_FILE: sdkCallFile },
  ['--require', fileURLToPath(new URL('./connector/sdk-call-counter.cjs', import.meta.url))],
  { keepLines: 50_000 },
);
const sdkCalls = async (): Promise<Record<string, number>> => {
  await sleep(1_100);
  return JSON.parse(await readFile(sdkCallFile, 'utf8').catch(() => '{}')) as Record<string, number>;
};
const DYNAMO = /Item|Query|Scan|Command$/;
const dynamoCalls = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .filter(([name]) => DYNAMO.test(name) && !/Message|Queue|Object|Bucket/.test(name))
      .map(([name, count]) => [name.replace(/Command$/, ''), count - (before[name] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );
const imported = () =>
  connector.lines.filter((l) => l.msg === 'history chunk imported').reduce((sum, l) => sum + Number(l.messages ?? 0), 0);

/** Live messages from `sender`'s phone to the account, one after the other; their latencies to the webhook (ms, sorted). */
async function liveLatencies(label: string, until?: () => boolean): Promise<number[]> {
  const sent = new Map<string, number>();
  for (let i = 0; i < LIVE && (until ? !until() : true); i++) {
    const at = Date.now();
    const { id } = await control.sendFromPhone(sender, account.phone, `${label} ${i}`);
    sent.set(id, at);
    await sleep(LIVE_GAP_MS);
  }
  await waitFor(`the ${label} live messages posted`, () => [...sent.keys()].every((id) => arrived.has(id)), { timeoutMs: 120_000 });
  return [...sent].map(([id, at]) => (arrived.get(id) ?? at) - at).sort((a, b) => a - b);
}

try {
  await connector.waitForLine('the connector to start', (l) => l.msg === 'connector started', 120_000);
  await registerWebhook(table, receiver.url);
  await control.createPhone(account.phone);
  await control.createPhone(sender, 'Live Sender');
  let seeded = performance.now();
  await control.seedHistory(account.phone, { chats: CHATS, messagesPerChat: PER_CHAT, days: 730 });
  console.log(`phone seeded with ${TOTAL} messages in ${CHATS} chats in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
  seeded = performance.now();

  const before = await sdkCalls();
  const rssBefore = rssOf(connector.pid);
  await createAccount(table, {
    id: account.id,
    collectionName: `auth_${account.id}`,
    status: 'connecting',
    settings: { ...defaultSettings(false), history: 'full' },
  });
  await queues.sendCommand({ type: 'connect', accountId: account.id, commandId: newCommandId(), payload: {} });
  const qr = await connector.waitForLine('the QR', (l) => l.event === 'qr' && l.accountId === account.id, 120_000);
  const linkedAt = performance.now();
  await control.scan(account.phone, String(qr.qr));
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(connector.pid));
  }, 200);
  await connector.waitForLine('the first chunk imported', (l) => l.msg === 'history chunk imported', 300_000);
  const during = await liveLatencies('during', () => imported() >= TOTAL);
  const duringCount = during.length;
  await waitFor(`${TOTAL} messages imported`, () => imported() >= TOTAL, { timeoutMs: 1_800_000, intervalMs: 500 });
  const importSeconds = (performance.now() - linkedAt) / 1000;
  clearInterval(sampler);
  const calls = dynamoCalls(await sdkCalls(), before);
  await sleep(10_000);
  const rssAfter = rssOf(connector.pid);
  const without = await liveLatencies('after');

  // Write units: every item the import left under the account, each ceil(size / 1 KB) (its
  // attribute names and values as JSON: near DynamoDB's own sizing for these small items).
  const items = await queryPartition(table, accountPartition(account.id));
  const units = items.reduce((sum, item) => sum + Math.max(1, Math.ceil(Buffer.byteLength(JSON.stringify(item)) / 1024)), 0);
  const requests = Object.values(calls).reduce((sum, count) => sum + count, 0);

  console.log(`\nFULL history of ${TOTAL} messages in ${CHATS} chats, settings.history "full":`);
  console.log(
    `  import: ${importSeconds.toFixed(1)} s from the scan to the last chunk stored (${(TOTAL / importSeconds).toFixed(0)} messages/s)`,
  );
  console.log(
    `  DynamoDB requests per message: ${(requests / TOTAL).toFixed(3)} (${Object.entries(calls)
      .map(([name, count]) => `${name} ${(count / TOTAL).toFixed(3)}`)
      .join(', ')}); link included`,
  );
  console.log(`  write units per message (items left: ${items.length}): ${(units / TOTAL).toFixed(2)}`);
  console.log(
    `  connector RSS: ${(rssBefore / MB).toFixed(0)} MB before, peak ${(peak / MB).toFixed(0)} MB during, ${(rssAfter / MB).toFixed(0)} MB 10 s after`,
  );
  const show = (values: number[]) => `p50 ${percentile(values, 50)} ms, p99 ${percentile(values, 99)} ms (${values.length})`;
  console.log(
    `  live messages to the webhook: during the import ${duringCount ? show(during) : 'none sent (import done first)'}; after ${show(without)}`,
  );
} finally {
  await connector.terminate();
  await receiver.down();
  await sandbox.stop();
  await emulators.stop();
}
