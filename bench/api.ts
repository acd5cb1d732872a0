/**
 * `npm run bench:api`: what the HTTP API costs over the DynamoDB query that serves it, measured
 * in one run against the embedded stack (dynalite, s3rver, fauxqs in this process), plus the
 * Lambda bundle's size and cold import time, and what authentication adds per request (the
 * same route without keys, with an admin key, with an account key). Then the large lists:
 * `GET /accounts` with 1,000 accounts (not paged: one response with every account, read by a
 * Query of the accounts' gsi1 partition, page after page) and the chat list of an account with
 * 5,000 chats (paged with limit/skip: its first page and a deep one), each beside the raw Query
 * it runs (BENCH_LARGE_ACCOUNTS, BENCH_LARGE_CHATS, BENCH_LARGE_ITERATIONS to run smaller).
 * Goals: API p50 within 1.3x of the raw query; bundle under 1.5 MB; cold import under 250 ms.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createClients, destroyClients } from '../core/aws.js';
import { loadConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { ensureResources } from '../core/resources.js';
import { createAccount, listAccounts } from '../core/store/accounts.js';
import { createApiKey } from '../core/store/api-keys.js';
import { listChats, updateChat } from '../core/store/chats.js';
import { listMessages, putMessage } from '../core/store/messages.js';
import { tableOf } from '../core/store/table.js';
import { startApiServer } from '../functions/server.js';
import { startEmulators } from '../infra/local/emulators.js';
import { measureLambdaBundle } from './lambda-bundle.js';

const WARMUP = 200;
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2000);
const ACCOUNTS = 20;
const MESSAGES = 200;
const CHAT = '15551234567@s.whatsapp.net';
const LARGE_ACCOUNTS = Number(process.env.BENCH_LARGE_ACCOUNTS ?? 1000);
const LARGE_CHATS = Number(process.env.BENCH_LARGE_CHATS ?? 5000);
/** A response of 1,000 accounts is ~0.3 MB: fewer rounds than the small lists. */
const LARGE_ITERATIONS = Number(process.env.BENCH_LARGE_ITERATIONS ?? 200);
const SEED_CONCURRENCY = 16;
/** Larger than any answer here: undici's dump() closes the connection of a body beyond its limit. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

interface Stats {
  perSecond: number;
  p50: number;
  p99: number;
}

function stats(samples: number[], elapsedMs: number): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { perSecond: samples.length / (elapsedMs / 1000), p50: at(0.5), p99: at(0.99) };
}

/** Runs `operation` sequentially; latency percentiles in ms and the resulting rate. */
async function measure(operation: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < WARMUP; i++) await operation();
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t = performance.now();
    await operation();
    samples.push(performance.now() - t);
  }
  return stats(
    samples,
    samples.reduce((a, b) => a + b, 0),
  );
}

/**
 * The API call and the raw query, alternated request by request so that both see the same
 * machine (JIT state, GC, other load): a fair ratio on a busy shared host.
 */
async function compare(
  api: () => Promise<unknown>,
  raw: () => Promise<unknown>,
  iterations = ITERATIONS,
): Promise<{ api: Stats; raw: Stats }> {
  for (let i = 0; i < Math.min(WARMUP, iterations); i++) {
    await api();
    await raw();
  }
  const apiSamples: number[] = [];
  const rawSamples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    let t = performance.now();
    await api();
    apiSamples.push(performance.now() - t);
    t = performance.now();
    await raw();
    rawSamples.push(performance.now() - t);
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return { api: stats(apiSamples, sum(apiSamples)), raw: stats(rawSamples, sum(rawSamples)) };
}

/** Several operations, run in turn request by request (as `compare`), each with its own stats. */
async function alternate(operations: Record<string, () => Promise<unknown>>): Promise<Record<string, Stats>> {
  const entries = Object.entries(operations);
  for (let i = 0; i < WARMUP; i++) for (const [, operation] of entries) await operation();
  const samples = new Map<string, number[]>(entries.map(([name]) => [name, []]));
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [name, operation] of entries) {
      const t = performance.now();
      await operation();
      samples.get(name)!.push(performance.now() - t);
    }
  }
  return Object.fromEntries(
    [...samples].map(([name, xs]) => [
      name,
      stats(
        xs,
        xs.reduce((a, b) => a + b, 0),
      ),
    ]),
  );
}

/** Runs `work` for 0..count-1, SEED_CONCURRENCY at a time. */
async function seed(count: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: SEED_CONCURRENCY }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

const fmt = (s: Stats) =>
  `${s.perSecond.toFixed(0).padStart(6)} req/s  p50 ${s.p50.toFixed(2).padStart(6)} ms  p99 ${s.p99.toFixed(2).padStart(6)} ms`;

async function main(): Promise<void> {
  logger.level = 'silent';
  const dataDir = await mkdtemp(join(tmpdir(), 'wa-bench-'));
  const emulators = await startEmulators({ dataDir });
  // Unpaced accounts: this measures the API's own costs (docs/sending.md#paced-sends).
  const config = loadConfig({ ...emulators.env, LOG_LEVEL: 'silent', SEND_PACING_DEFAULT: 'off' });
  const clients = createClients(config);
  await ensureResources(config, clients, logger);
  const api = await startApiServer({ config, clients, logger, port: 0, host: '127.0.0.1' });
  const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
  const securedApi = await startApiServer({ config: { ...config, API_KEY: ADMIN_KEY }, clients, logger, port: 0, host: '127.0.0.1' });
  // undici's pool, not fetch: the client's own cost should not count as the API's.
  const pool = new Pool(api.url, { connections: 1, pipelining: 1 });
  const securedPool = new Pool(securedApi.url, { connections: 1, pipelining: 1 });
  const table = tableOf(config, clients);

  try {
    for (let i = 0; i < ACCOUNTS; i++) {
      await createAccount(table, { id: `bench${i}`, collectionName: `auth_bench${i}`, status: 'connected' });
    }
    for (let i = 0; i < MESSAGES; i++) {
      await putMessage(table, 'bench0', {
        messageId: `BENCH${String(i).padStart(5, '0')}`,
        from: CHAT,
        chatId: CHAT,
        timestamp: 1_700_000_000_000 + i * 1000,
        type: 'text',
        fromMe: i % 2 === 0,
        text: `benchmark message ${i} with a little text in it`,
      });
    }

    const get = async (path: string, key?: string, via = pool) => {
      const response = await via.request({ method: 'GET', path, ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}) });
      if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`);
      // Read to the end and dropped: collecting a ~0.3 MB body into one buffer is the client's
      // cost, not the API's (the raw query has no such step).
      await response.body.dump({ limit: DRAIN_LIMIT });
    };
    const { secret: accountKey } = await createApiKey(table, 'bench0', 'bench');

    const results: Array<{ name: string; api: Stats; raw: Stats }> = [];
    results.push({
      name: 'GET /accounts/:id/chats/:chatId/messages (limit 50)',
      ...(await compare(
        () => get(`/accounts/bench0/chats/${CHAT}/messages`),
        () => listMessages(table, 'bench0', CHAT, { limit: 50, skip: 0 }),
      )),
    });
    results.push({
      name: `GET /accounts (${ACCOUNTS} accounts)`,
      ...(await compare(
        () => get('/accounts'),
        () => listAccounts(table),
      )),
    });

    // The large lists: accounts up to LARGE_ACCOUNTS, and LARGE_CHATS chats on bench1.
    await seed(LARGE_ACCOUNTS - ACCOUNTS, (i) =>
      createAccount(table, { id: `bench${ACCOUNTS + i}`, collectionName: `auth_bench${ACCOUNTS + i}`, status: 'connected' }),
    );
    await seed(LARGE_CHATS, (i) =>
      updateChat(table, 'bench1', `${15560000000 + i}@s.whatsapp.net`, {
        at: 1_700_000_000_000 + i * 1000,
        name: `Contact ${i}`,
        unread: i % 3 === 0 ? 1 : 0,
      }),
    );
    results.push({
      name: `GET /accounts (${LARGE_ACCOUNTS} accounts, one response)`,
      ...(await compare(
        () => get('/accounts'),
        () => listAccounts(table),
        LARGE_ITERATIONS,
      )),
    });
    results.push({
      name: `GET /accounts/:id/chats (${LARGE_CHATS} chats, first page of 50)`,
      ...(await compare(
        () => get('/accounts/bench1/chats'),
        () => listChats(table, 'bench1', { limit: 50, skip: 0 }),
        LARGE_ITERATIONS,
      )),
    });
    const deepSkip = Math.max(0, LARGE_CHATS - 100);
    results.push({
      name: `GET /accounts/:id/chats (${LARGE_CHATS} chats, limit 100 skip ${deepSkip})`,
      ...(await compare(
        () => get(`/accounts/bench1/chats?limit=100&skip=${deepSkip}`),
        () => listChats(table, 'bench1', { limit: 100, skip: deepSkip }),
        LARGE_ITERATIONS,
      )),
    });

    const messagesPath = `/accounts/bench0/chats/${CHAT}/messages`;
    const auth = await alternate({
      'no API_KEY  ': () => get(messagesPath),
      'admin key   ': () => get(messagesPath, ADMIN_KEY, securedPool),
      'account key ': () => get(messagesPath, accountKey, securedPool),
    });

    const floor = await measure(() => get('/ping'));
    console.log(`\nGET /ping (HTTP floor, no DynamoDB)  ${fmt(floor)}`);
    console.log(
      `\nAPI vs the raw DynamoDB query (dynalite in this process; sequential, API and raw alternated; ${ITERATIONS} each after ${WARMUP} warm-up; req/s = 1 / mean latency)\n`,
    );
    for (const r of results) {
      console.log(r.name);
      console.log(`  API        ${fmt(r.api)}`);
      console.log(`  raw query  ${fmt(r.raw)}`);
      const ratio = r.api.p50 / r.raw.p50;
      console.log(`  p50 ratio  ${ratio.toFixed(2)}x  (goal <= 1.30x: ${ratio <= 1.3 ? 'met' : 'NOT met'})\n`);
    }
    const open = auth['no API_KEY  ']!;
    console.log(`Authentication on ${messagesPath.replace(CHAT, ':chatId')} (the three alternated request by request)`);
    for (const [name, s] of Object.entries(auth)) {
      console.log(`  ${name} ${fmt(s)}  p50 +${(s.p50 - open.p50).toFixed(2)} ms`);
    }
    console.log('');
  } finally {
    await pool.close();
    await securedPool.close();
    await api.close();
    await securedApi.close();
    destroyClients(clients);
    await emulators.stop();
    await rm(dataDir, { recursive: true, force: true });
  }

  const bundle = await measureLambdaBundle();
  const sizeMb = bundle.bundleBytes / (1024 * 1024);
  console.log(`Lambda bundle  ${bundle.bundleBytes} bytes (${sizeMb.toFixed(2)} MB; goal < 1.5 MB: ${sizeMb < 1.5 ? 'met' : 'NOT met'})`);
  const median = bundle.importMs[2]!;
  console.log(`Cold import    median ${median.toFixed(0)} ms of 5 (goal < 250 ms: ${median < 250 ? 'met' : 'NOT met'})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
