/**
 * `npm run bench:dashboard`: what the console at /dashboard costs a browser and the API, in a
 * real browser (test/support/browser.ts) on the sandbox, measured in one run:
 *
 * - the bytes of a cold first load (the page, its script and stylesheet, the API answers until
 *   the accounts list shows), as received: gzipped where the server gzips;
 * - the time from navigation start to the frame that shows the accounts' list items, over
 *   BENCH_LOADS cold loads (a new browser context each: empty cache, a tab already signed in);
 * - the time from a click on the chat of BENCH_MESSAGES messages to the frame that shows its
 *   messages (the newest 50: the console's page), over BENCH_OPENS opens;
 * - the API requests per minute a visible page sends while nobody touches it, over
 *   BENCH_IDLE_SECONDS on three views (the accounts list; an account with a chat open; an
 *   account's webhooks tab with a webhook's deliveries open), what they cost on AWS, and the same
 *   over BENCH_HIDDEN_SECONDS once the tab is hidden (goal: none);
 * - the Lambda bundle's size and cold import (as bench:api), the console's gzipped size.
 *
 * Set-up, all through the HTTP API (API_KEY set, as deployed): BENCH_ACCOUNTS (20) accounts
 * created and each linked by a sandbox phone scanning its QR; an account-scoped webhook on the
 * first (a local receiver); a raw Baileys phone sends BENCH_MESSAGES (500) texts to it. The
 * emulators and the API run in this process, the sandbox and the connector in their own.
 * Goals: first load ≤ 150 KB gzipped; Lambda bundle ≤ 1.5 MB; its cold import ≤ 250 ms.
 */
import { loadavg } from 'node:os';
import { pino } from 'pino';
import type { Browser, Page } from 'playwright-core';
import { installConsoleCapture } from '../connector/console-capture.js';
import { startApiServer } from '../functions/server.js';
import { spawnConnector } from '../test/e2e/support/child-connector.js';
import { linkClient, type SandboxClient } from '../test/sandbox/support/sandbox-client.js';
import { launchBrowser } from '../test/support/browser.js';
import { waitFor } from '../test/support/wait.js';
import { startWebhookReceiver } from '../test/support/webhook-receiver.js';
import { inBatches, percentile, sleep } from './connector/measure.js';
import { ASSUMPTION, costPerRequest, HOURS_PER_MONTH, PRICES, readUnits } from './dashboard/aws-cost.js';
import { measureLambdaBundle } from './lambda-bundle.js';
import {
  accountsShownScript,
  countApiRequests,
  type CountedRequest,
  HIDE_TAB,
  isApiRequest,
  pageValue,
  signedInPage,
  watchChatOpening,
} from './dashboard/page.js';
import { apiCaller, type ConsoleAccount, createAndLink, holdsMessages } from './dashboard/seed.js';
import { startSandboxStack } from './sandbox-stack.js';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 20);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 500);
const LOADS = Number(process.env.BENCH_LOADS ?? 10);
const OPENS = Number(process.env.BENCH_OPENS ?? 10);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const HIDDEN_SECONDS = Number(process.env.BENCH_HIDDEN_SECONDS ?? 30);
/** The console shows a chat's newest 50 messages (dashboard/views/chat.tsx). */
const CHAT_PAGE = 50;
const SEND_CONCURRENCY = 4;
const FIRST_LOAD_GOAL_KB = 150;
const BUNDLE_GOAL_MB = 1.5;
const IMPORT_GOAL_MS = 250;

const ADMIN_KEY = 'bench-console-admin-key-0123456789';
const PHONE_OF_SENDER = '15557299999';
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const ms = (value: number) => `${value.toFixed(0)} ms`;
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
const usd = (value: number) => (value >= 0.1 ? `$${value.toFixed(2)}` : `$${value.toPrecision(2)}`);

interface Cleanup {
  browser?: Browser;
  phone?: SandboxClient;
}

async function main() {
  console.log(`== console benchmark: ${ACCOUNTS} accounts, a chat of ${MESSAGES} messages ==`);
  // The phone's Baileys runs here: libsignal's console dumps of session records go nowhere.
  installConsoleCapture(pino({ level: 'silent' }));
  const stack = await startSandboxStack({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const { emulators, sandbox, env, config, clients, control } = stack;
  const connector = spawnConnector({ ...env, TABLE_NAME: config.TABLE_NAME });
  const server = await startApiServer({
    config: { ...config, API_KEY: ADMIN_KEY },
    clients,
    logger: pino({ level: 'silent' }),
    port: 0,
    host: '127.0.0.1',
  });
  const receiver = await startWebhookReceiver();
  const cleanup: Cleanup = {};
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.kill(sandbox.pid, 'SIGKILL');
      connector.process.kill('SIGKILL');
      // Playwright ends the browser it launched when this process exits.
      void Promise.race([cleanup.browser?.close(), sleep(2_000)]).finally(() => process.exit(130));
    });
  }
  const report: string[] = [];
  const say = (line: string) => {
    report.push(line);
    console.log(line);
  };
  try {
    const api = apiCaller(server.url, ADMIN_KEY);
    const accounts: ConsoleAccount[] = Array.from({ length: ACCOUNTS }, (_, i) => ({
      id: `console${String(i).padStart(2, '0')}`,
      name: `Line ${i + 1}`,
      phone: String(15557200000 + i),
    }));
    const first = accounts[0]!;
    let started = performance.now();
    await createAndLink(api, control, accounts);
    console.log(`${ACCOUNTS} accounts created and linked in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const { webhook } = await api<{ webhook: { webhookId: string } }>('POST', `/accounts/${first.id}/webhooks`, {
      url: receiver.url,
      events: ['message'],
    });
    started = performance.now();
    const phone = await linkClient(sandbox, PHONE_OF_SENDER, { pushName: 'Bench Sender' });
    cleanup.phone = phone;
    const to = `${first.phone}@s.whatsapp.net`;
    const texts = Array.from({ length: MESSAGES }, (_, i) => `Message ${i + 1} of ${MESSAGES} from the bench sender`);
    await inBatches(texts, SEND_CONCURRENCY, async (text) => {
      await phone.sock!.sendMessage(to, { text });
    });
    const chat = await waitFor(`the chat on ${first.id}`, async () => {
      const { chats } = await api<{ chats: Array<{ chatId: string; name: string }> }>('GET', `/accounts/${first.id}/chats`);
      return chats[0];
    });
    await waitFor(`${MESSAGES} messages stored`, () => holdsMessages(api, first.id, chat.chatId, MESSAGES), {
      timeoutMs: 600_000,
      intervalMs: 500,
    });
    await waitFor(`${MESSAGES} messages at the webhook`, () => receiver.posts.length >= MESSAGES, { timeoutMs: 600_000, intervalMs: 500 });
    await waitFor('the devices to take in every message', async () => Object.values(await control.undelivered()).every((n) => n === 0));
    console.log(
      `${MESSAGES} texts sent by a Baileys phone, stored and posted to the webhook in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
        `load average ${loadavg()[0]?.toFixed(2)}\n`,
    );

    const browser = await launchBrowser({ closableContexts: true });
    cleanup.browser = browser;
    const origin = server.url;
    const dashboard = `${origin}/dashboard/`;

    // 1. Cold loads: bytes and time to the accounts list.
    const loadTimes: number[] = [];
    let firstLoad: { byKind: Map<string, { bytes: number; count: number }>; total: number; responses: number } | undefined;
    // Load -1 warms up: run from a checkout, the API builds the console on its first request (the
    // Lambda bundle and the image carry it prebuilt), and the browser starts its processes.
    let warmUpMs = 0;
    for (let i = -1; i < LOADS; i++) {
      const { context, page } = await signedInPage(browser, ADMIN_KEY);
      await context.addInitScript(accountsShownScript(ACCOUNTS));
      const pending: Array<Promise<{ kind: string; bytes: number }>> = [];
      let loading = true;
      page.on('response', (response) => {
        if (!loading) return;
        const request = response.request();
        const kind = isApiRequest(request, origin) ? 'API' : request.resourceType();
        pending.push(
          response
            .finished()
            .then(() => request.sizes())
            .then((sizes) => ({ kind, bytes: sizes.responseBodySize })),
        );
      });
      await page.goto(dashboard);
      await page
        .locator('ul[aria-label="Accounts"] > li')
        .nth(ACCOUNTS - 1)
        .waitFor();
      loading = false;
      const shownAt = await pageValue<number>(page, '__accountsShown');
      if (i < 0) warmUpMs = shownAt;
      else loadTimes.push(shownAt);
      if (i === 0) {
        const byKind = new Map<string, { bytes: number; count: number }>();
        let total = 0;
        for (const { kind, bytes } of await Promise.all(pending)) {
          const entry = byKind.get(kind) ?? { bytes: 0, count: 0 };
          entry.bytes += bytes;
          entry.count += 1;
          byKind.set(kind, entry);
          total += bytes;
        }
        firstLoad = { byKind, total, responses: pending.length };
      }
      await context.close();
    }
    const load = firstLoad!;
    const part = (kind: string, label: string) => {
      const entry = load.byKind.get(kind);
      return entry ? `${label} ${kind === 'API' ? `${entry.bytes} B in ${entry.count} requests` : kb(entry.bytes)}` : `${label} none`;
    };
    say(
      `first load, cold: ${kb(load.total)} received in ${load.responses} responses (${part('document', 'page')}, ${part('script', 'script')}, ` +
        `${part('stylesheet', 'stylesheet')}, ${part('API', 'API')}) (goal <= ${FIRST_LOAD_GOAL_KB} KB: ${met(load.total <= FIRST_LOAD_GOAL_KB * 1024)})`,
    );
    const sortedLoads = [...loadTimes].sort((a, b) => a - b);
    say(
      `time to the accounts list (${ACCOUNTS} accounts shown, from navigation start): median ${ms(percentile(sortedLoads, 50))}, ` +
        `p90 ${ms(percentile(sortedLoads, 90))} of ${LOADS} cold loads (each: ${loadTimes.map((t) => t.toFixed(0)).join(', ')}; ` +
        `after a first one, not counted, of ${ms(warmUpMs)} with the console built on the API's first request)`,
    );

    // 2. Opening the chat of MESSAGES messages.
    const chatPath = `#/accounts/${first.id}/chats`;
    const shownMessages = Math.min(CHAT_PAGE, MESSAGES);
    const openTimes: number[] = [];
    {
      const { context, page } = await signedInPage(browser, ADMIN_KEY);
      await page.goto(`${dashboard}${chatPath}`);
      const link = page.locator(`a.chat-link[href="${chatPath}/${encodeURIComponent(chat.chatId)}"]`);
      for (let i = 0; i < OPENS; i++) {
        await page.locator('.chat-placeholder').waitFor();
        await link.waitFor();
        await page.evaluate(watchChatOpening(shownMessages));
        await link.click();
        const timing = await pageValue<{ clickedAt: number; shownAt: number }>(page, '__chatTiming');
        openTimes.push(timing.shownAt - timing.clickedAt);
        await page.evaluate(`location.hash = ${JSON.stringify(chatPath)}`);
      }
      await context.close();
    }
    const sortedOpens = [...openTimes].sort((a, b) => a - b);
    say(
      `time to an open chat (click to the frame showing its newest ${shownMessages} of ${MESSAGES} messages): median ${ms(percentile(sortedOpens, 50))}, ` +
        `p90 ${ms(percentile(sortedOpens, 90))} of ${OPENS} opens (each: ${openTimes.map((t) => t.toFixed(0)).join(', ')})`,
    );

    // 3. Idle pages: requests per minute, visible then hidden.
    const views: Array<{ name: string; hash: string; ready: (page: Page) => Promise<void> }> = [
      {
        name: 'accounts list',
        hash: '#/',
        ready: (page) =>
          page
            .locator('ul[aria-label="Accounts"] > li')
            .nth(ACCOUNTS - 1)
            .waitFor(),
      },
      {
        name: 'a chat open',
        hash: `${chatPath}/${encodeURIComponent(chat.chatId)}`,
        ready: (page) =>
          page
            .locator('ol.messages > li.message')
            .nth(shownMessages - 1)
            .waitFor(),
      },
      {
        name: 'webhooks tab, deliveries open',
        hash: `#/accounts/${first.id}/webhooks`,
        ready: async (page) => {
          await page.getByRole('button', { name: 'Deliveries', exact: true }).click();
          await page.getByRole('cell', { name: 'delivered', exact: true }).first().waitFor();
        },
      },
    ];
    const perMinute = (count: number, seconds: number) => (count * 60) / seconds;
    const costLines: string[] = [];
    for (const view of views) {
      const { context, page } = await signedInPage(browser, ADMIN_KEY);
      await page.goto(`${dashboard}${view.hash}`);
      await view.ready(page);
      const visible = countApiRequests(page, origin);
      await sleep(IDLE_SECONDS * 1000);
      visible.stop();
      await page.evaluate(HIDE_TAB);
      const hidden = countApiRequests(page, origin);
      await sleep(HIDDEN_SECONDS * 1000);
      hidden.stop();
      await context.close();

      const rate = perMinute(visible.requests.length, IDLE_SECONDS);
      const units = visible.requests.reduce((sum, request) => sum + readUnits(request.bytes), 0) / Math.max(1, visible.requests.length);
      const bytesPerMinute = perMinute(
        visible.requests.reduce((sum, request) => sum + request.bytes, 0),
        IDLE_SECONDS,
      );
      const perHour = rate * 60 * costPerRequest(units);
      const transferPerHour = ((bytesPerMinute * 60) / 1024 ** 3) * PRICES.transferOutGb;
      say(
        `idle, visible, ${view.name}: ${rate.toFixed(1)} requests/min (${byRoute(visible.requests, IDLE_SECONDS)}); ` +
          `${kb(bytesPerMinute)}/min of answers`,
      );
      costLines.push(
        `  ${view.name}: ${usd(perHour)} per visible hour, ${usd(perHour * HOURS_PER_MONTH)} per month visible around the clock ` +
          `(${units.toFixed(2)} read units per request; answers out to the internet would add ${usd(transferPerHour)}/hour at $0.09/GB)`,
      );
      say(
        `idle, hidden, ${view.name}: ${hidden.requests.length} requests in ${HIDDEN_SECONDS} s (${perMinute(hidden.requests.length, HIDDEN_SECONDS).toFixed(1)}/min; goal 0: ${met(hidden.requests.length === 0)})`,
      );
    }
    say(`what a visible idle tab costs on AWS (${ASSUMPTION}):`);
    for (const line of costLines) say(line);
    say('  a hidden tab: nothing (it sends no request)');
    // Keeps the webhook in the report's context: the deliveries it shows are the chat's messages.
    console.log(`(webhook ${webhook.webhookId}: ${receiver.posts.length} posts received)`);
  } finally {
    await cleanup.browser?.close();
    await cleanup.phone?.stop();
    await server.close();
    await receiver.close();
    await connector.terminate();
    await sandbox.stop();
    await emulators.stop();
  }

  // With everything stopped: the machine is as quiet as it gets for the cold imports.
  const bundle = await measureLambdaBundle();
  const bundleMb = bundle.bundleBytes / (1024 * 1024);
  const importMedian = percentile(bundle.importMs, 50);
  say(
    `Lambda bundle: ${bundle.bundleBytes} bytes (${bundleMb.toFixed(2)} MB; goal <= ${BUNDLE_GOAL_MB} MB: ${met(bundleMb <= BUNDLE_GOAL_MB)})`,
  );
  say(
    `cold import of the bundle: median ${ms(importMedian)} of ${bundle.importMs.length} (each: ${bundle.importMs.map((t) => t.toFixed(0)).join(', ')}) ` +
      `(goal <= ${IMPORT_GOAL_MS} ms: ${met(importMedian <= IMPORT_GOAL_MS)})`,
  );
  const consoleGzipped = bundle.console.reduce((sum, file) => sum + file.gzipped, 0);
  say(
    `the console beside the bundle: ${kb(consoleGzipped)} gzipped (${bundle.console.map((file) => `${file.name} ${kb(file.bytes)}, ${kb(file.gzipped)} gzipped`).join('; ')})`,
  );
  console.log('\n== summary ==');
  for (const line of report) console.log(line);
}

/** Requests per minute of each route, most frequent first. */
function byRoute(requests: CountedRequest[], seconds: number): string {
  const counts = new Map<string, number>();
  for (const { route } of requests) counts.set(route, (counts.get(route) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([route, count]) => `${route} ${((count * 60) / seconds).toFixed(1)}`)
    .join(', ');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
