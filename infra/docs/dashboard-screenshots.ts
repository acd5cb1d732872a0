import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { installConsoleCapture } from '../../connector/console-capture.js';
import { type Gateway, startGateway } from '../../test/e2e/support/gateway.js';
import { linkClient, type SandboxClient } from '../../test/sandbox/support/sandbox-client.js';
import { launchBrowser } from '../../test/support/browser.js';
import { startTestApi, type TestApi } from '../../test/support/test-api.js';
import { waitFor } from '../../test/support/wait.js';

/**
 * `npm run docs:screenshots`: the pictures of docs/dashboard.md, taken of the console in a real
 * browser on the sandbox (the stack of the end-to-end tests, in this process). An account with
 * a name, linked by a phone that scanned its QR; a phone (Dan Smith, a raw Baileys client)
 * writing to it, a picture included, and reading its answers; a webhook on a local receiver,
 * so that its deliveries log has rows; a second account linked and a third waiting for a scan,
 * so that its QR shows. Each picture is written to docs/images/ as a palette PNG, small enough
 * to keep in the repository.
 */
const OUT = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const ADMIN_KEY = 'docs-admin-key-0123456789abcdef';
/** Where the console keeps a signed-in tab's key (dashboard/session.ts). */
const KEY_STORAGE = 'wa-gateway.key';
const SALES = { id: 'sales', name: 'Sales line', phone: '15550700001' };
const SUPPORT = { id: 'support', name: 'Support desk', phone: '15550700002' };
const WAITING = { id: 'warehouse', name: 'Warehouse' };
const DAN = '15550700100';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function main(): Promise<void> {
  // Baileys' dependencies print session records to the console: nowhere, here.
  installConsoleCapture(pino({ level: 'silent' }));
  let gw: Gateway | undefined;
  let api: TestApi | undefined;
  let dan: SandboxClient | undefined;
  let browser: Browser | undefined;
  const stop = async () => {
    await browser?.close();
    await dan?.stop();
    await api?.close();
    await gw?.stop();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop().finally(() => process.exit(130)));
  try {
    gw = await startGateway({ overrides: { API_KEY: ADMIN_KEY }, logLevel: 'warn' });
    api = await startTestApi(gw.stack);
    const call = async (method: string, path: string, body?: unknown) => {
      const answer = await api!.call(method, path, body, { authorization: `Bearer ${ADMIN_KEY}` });
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body;
    };

    // Two linked accounts, each by its phone scanning the QR the API shows.
    for (const account of [SALES, SUPPORT]) {
      await gw.control.createPhone(account.phone);
      await call('POST', '/accounts', { id: account.id, name: account.name });
      await waitFor(`${account.id}'s phone to scan its QR`, async () => {
        const { qr } = await call('GET', `/accounts/${account.id}/qr`);
        await gw!.control.scan(account.phone, String(qr)); // throws when the code rotated meanwhile
        return true;
      });
      await gw.waitForStatus(account.id, 'connected');
    }
    await call('POST', `/accounts/${SALES.id}/webhooks`, { url: gw.webhooks.url, events: ['message', 'message.status'] });

    // Dan writes, sends a picture, and reads the answers.
    dan = await linkClient(gw.sandbox, DAN, { pushName: 'Dan Smith' });
    const sales = `${SALES.phone}@s.whatsapp.net`;
    const toDan = `${DAN}@s.whatsapp.net`;
    await dan.sock!.sendMessage(sales, { text: 'Hi! Is my order #1042 ready to collect?' });
    await nextSecond();
    const answers = [await answer(call, 'Hello Dan, yes: it is packed and waiting at the front desk.')];
    await nextSecond();
    await dan.sock!.sendMessage(sales, { image: await parcelPicture(), caption: 'Is this the one? The label says 1042.' });
    await waitFor('the picture stored', async () => {
      const { messages } = await call('GET', `/accounts/${SALES.id}/chats/${toDan}/messages?limit=1`);
      return (messages as Array<{ type: string; hasMedia?: boolean }>)[0]?.hasMedia === true;
    });
    await nextSecond();
    answers.push(await answer(call, "That's the one. We are open until 6 pm."));
    await nextSecond();
    await dan.sock!.sendMessage(sales, { text: 'Great, see you at 5. Thanks!' });
    await dan.sock!.readMessages(answers.map((message) => message.key));
    await waitFor('three deliveries at the webhook', () => gw!.webhooks.posts.length >= 3);

    await call('POST', '/accounts', { id: WAITING.id, name: WAITING.name });
    await waitFor(
      `${WAITING.id}'s QR`,
      async () =>
        (await api!.call('GET', `/accounts/${WAITING.id}/qr`, undefined, { authorization: `Bearer ${ADMIN_KEY}` })).status === 200,
    );

    browser = await launchBrowser({ closableContexts: true });
    const url = `${api.url}/dashboard/`;
    await mkdir(OUT, { recursive: true });

    const signIn = await openPage(browser, DESKTOP, false);
    await signIn.goto(url);
    await signIn.getByLabel('Access key', { exact: true }).waitFor();
    await shoot(signIn, 'dashboard-sign-in.png', { height: 460 });

    const page = await openPage(browser, DESKTOP);
    await page.goto(url);
    await page.locator('ul[aria-label="Accounts"] > li').nth(2).waitFor();
    await page.getByText('waiting for a scan').waitFor();
    await shoot(page, 'dashboard-accounts.png');

    await page.goto(`${url}#/accounts/${WAITING.id}/chats`);
    await page.getByRole('img', { name: `QR code for ${WAITING.id}` }).waitFor();
    await shoot(page, 'dashboard-link-qr.png');

    await page.goto(`${url}#/accounts/${SALES.id}/chats/${encodeURIComponent(toDan)}`);
    await pictureShown(page);
    await page.locator('.sent-status', { hasText: 'read' }).first().waitFor();
    await page.locator('.unread').waitFor({ state: 'detached' });
    await shoot(page, 'dashboard-chat.png');

    await page.goto(`${url}#/accounts/${SALES.id}/webhooks`);
    await page.getByRole('button', { name: 'Deliveries', exact: true }).click();
    await page.getByRole('cell', { name: 'delivered', exact: true }).first().waitFor();
    await shoot(page, 'dashboard-webhooks.png', { fullPage: true });

    const phone = await openPage(browser, PHONE);
    await phone.goto(`${url}#/accounts/${SALES.id}/chats/${encodeURIComponent(toDan)}`);
    await pictureShown(phone);
    await shoot(phone, 'dashboard-phone.png');
  } finally {
    await stop();
  }

  /** The account answers Dan through the API; resolves with the message as Dan received it. */
  async function answer(call: (method: string, path: string, body?: unknown) => Promise<unknown>, message: string) {
    await call('POST', `/accounts/${SALES.id}/message/send`, { to: `${DAN}@s.whatsapp.net`, message });
    return dan!.waitForMessage((received) => textOf(received) === message, `Dan to get "${message}"`);
  }
}

const textOf = (message: WAMessage) => message.message?.conversation ?? message.message?.extendedTextMessage?.text;

/** A tab with the times in UTC and English; signed in with the admin key unless told. */
async function openPage(browser: Browser, viewport: { width: number; height: number }, signedIn = true): Promise<Page> {
  const context = await browser.newContext({ viewport, locale: 'en-GB', timezoneId: 'UTC', deviceScaleFactor: 1 });
  if (signedIn) await context.addInitScript(`sessionStorage.setItem(${JSON.stringify(KEY_STORAGE)}, ${JSON.stringify(ADMIN_KEY)})`);
  return context.newPage();
}

/**
 * Resolves once the chat's picture is decoded on screen (its preview comes from a blob: URL) and
 * the list shows its newest message.
 */
async function pictureShown(page: Page): Promise<void> {
  const picture = page.locator('figure.image img');
  await picture.waitFor();
  await waitFor('the picture to load', () => picture.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth > 0));
  await waitFor('the newest message in view', () =>
    page.locator('ol.messages').evaluate((list) => {
      const { scrollTop, scrollHeight, clientHeight } = list as unknown as {
        scrollTop: number;
        scrollHeight: number;
        clientHeight: number;
      };
      return scrollTop + clientHeight >= scrollHeight - 2;
    }),
  );
}

/**
 * Resolves in the next second of the clock. WhatsApp dates a message to the second, and the
 * messages of one second are listed by id: each message of the conversation has its own second,
 * so that the chat reads in the order it was written.
 */
async function nextSecond(): Promise<void> {
  const second = Math.floor(Date.now() / 1000);
  await waitFor('the next second', () => Math.floor(Date.now() / 1000) > second, { intervalMs: 20 });
}

/** A screenshot of the viewport (or the whole page, or its top `height` pixels), as a palette PNG. */
async function shoot(page: Page, name: string, options: { fullPage?: boolean; height?: number } = {}): Promise<void> {
  // No caret or focus ring caught half-way, no scroll bar.
  await page.evaluate('document.activeElement instanceof HTMLElement && document.activeElement.blur()');
  const viewport = page.viewportSize()!;
  const shot = await page.screenshot({
    fullPage: options.fullPage ?? false,
    animations: 'disabled',
    ...(options.height ? { clip: { x: 0, y: 0, width: viewport.width, height: options.height } } : {}),
  });
  const png = await sharp(shot).png({ palette: true, colours: 128, compressionLevel: 9, effort: 10 }).toBuffer();
  await writeFile(join(OUT, name), png);
  console.log(`${name}: ${(png.length / 1024).toFixed(0)} KB`);
}

/** A parcel with its label, drawn as SVG: the picture Dan sends. */
function parcelPicture(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="360">
  <rect width="480" height="360" fill="#e9eef2"/>
  <polygon points="120,120 240,70 360,120 240,170" fill="#d9a35f"/>
  <polygon points="120,120 240,170 240,310 120,260" fill="#c18543"/>
  <polygon points="240,170 360,120 360,260 240,310" fill="#a96f33"/>
  <polygon points="170,99 290,149 310,141 190,91" fill="#e7c08c"/>
  <g transform="skewY(-22.62)">
    <rect x="262" y="300" width="76" height="46" fill="#fff"/>
    <text x="272" y="330" font-family="sans-serif" font-size="20" fill="#333">1042</text>
  </g>
</svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 80 }).toBuffer();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
