import sharp from 'sharp';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, unnamedControls, type WatchedPage, widerThanScreen } from '../support/browser.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { linkClient, type SandboxClient } from '../sandbox/support/sandbox-client.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * The console at /dashboard in a real browser, on the sandbox: a person signs in with a key,
 * creates an account, links a phone by its QR, reads and writes a chat with a Baileys phone,
 * adds a webhook and sees its deliveries, and hands out an account key that opens that account
 * only. Every control has a name, nothing scrolls sideways on a phone, nothing is fetched from
 * another host, and no script fails.
 */
const ADMIN_KEY = 'console-admin-key-0123456789';
const ACCOUNT = 'console1';
const ACCOUNT_PHONE = '15550600001';
const CAROL_PHONE = '15550600002';
const accountJid = `${ACCOUNT_PHONE}@s.whatsapp.net`;

describe('the console at /dashboard, in a browser', () => {
  let gw: Gateway;
  let api: TestApi;
  let browser: Browser;
  let carol: SandboxClient;
  let admin: WatchedPage;
  const pages: WatchedPage[] = [];
  const asAdmin = { authorization: `Bearer ${ADMIN_KEY}` };

  const textsCarolGot = () =>
    carol.messages.map((message) => message.message?.conversation ?? message.message?.extendedTextMessage?.text).filter(Boolean);

  beforeAll(async () => {
    // Short QR rounds: the test sees the image replaced by the next code.
    gw = await startGateway({ overrides: { API_KEY: ADMIN_KEY }, qrTimeoutMs: 6_000 });
    api = await startTestApi(gw.stack);
    await gw.control.createPhone(ACCOUNT_PHONE, 'Console Line');
    carol = await linkClient(gw.sandbox, CAROL_PHONE, { pushName: 'Carol' });
    browser = await launchBrowser();
    admin = await openPage(browser, api.url);
    pages.push(admin);
  });
  afterAll(async () => {
    await browser?.close();
    await carol?.stop();
    await api?.close();
    await gw?.stop();
  });

  it('asks for a key, refuses a wrong one, and signs in with the admin key', async () => {
    const { page } = admin;
    await page.goto(`${api.url}/`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/');
    await page.getByLabel('Access key', { exact: true }).fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('That key is not valid.').waitFor();
    await page.getByLabel('Access key', { exact: true }).fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Create account', exact: true }).waitFor();
    await page.getByText('No accounts yet').waitFor();
    expect(page.url()).not.toContain(ADMIN_KEY);
  });

  it('creates an account, shows its QR as it rotates, and turns connected by itself once the phone scans it', async () => {
    const { page } = admin;
    await page.getByLabel('Account id', { exact: true }).fill(ACCOUNT);
    await page.getByLabel('Name', { exact: true }).fill('Console line');
    await page.getByRole('button', { name: 'Create account', exact: true }).click();
    const qr = page.getByRole('img', { name: `QR code for ${ACCOUNT}`, exact: true });
    await qr.waitFor();
    expect((await qr.boundingBox())?.width).toBeGreaterThanOrEqual(100);
    const first = await qr.getAttribute('src');
    await waitFor('the next QR on screen', async () => (await qr.getAttribute('src')) !== first, { timeoutMs: 30_000 });

    // The phone scans what the screen shows: the QR text comes from the API, as the image does.
    await waitFor('the phone to scan the current QR', async () => {
      const current = await api.call('GET', `/accounts/${ACCOUNT}/qr`, undefined, asAdmin);
      if (current.status !== 200) return false;
      try {
        await gw.control.scan(ACCOUNT_PHONE, current.body.qr as string);
        return true;
      } catch {
        return false; // rotated between the read and the scan
      }
    });
    await page.locator('.account-state').getByText('connected', { exact: true }).waitFor({ timeout: 30_000 });
    await expect(qr.count()).resolves.toBe(0);
    expect(await unnamedControls(page)).toEqual([]);
  });

  it('shows an inbound message in the open chat by itself, and sends a text, an image and a reply that reach the phone', async () => {
    const { page } = admin;
    const first = await carol.sock!.sendMessage(accountJid, { text: 'Hello from Carol' });
    const chat = page.getByRole('link', { name: /Carol|\+15550600002/ });
    await chat.waitFor({ timeout: 30_000 });
    await chat.click();
    const messages = page.getByRole('list', { name: /^Messages with/ });
    await messages.getByText('Hello from Carol').waitFor();

    await carol.sock!.sendMessage(accountJid, { text: 'Are you there?' });
    await messages.getByText('Are you there?').waitFor();

    await page.getByLabel('Message', { exact: true }).fill('Hi Carol, from the console');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await waitFor('Carol to get the text', () => textsCarolGot().includes('Hi Carol, from the console'));
    const sentItem = messages.getByRole('listitem').filter({ hasText: 'Hi Carol, from the console' });
    await sentItem.locator('.sent-status').waitFor();

    const png = await sharp({ create: { width: 160, height: 120, channels: 3, background: '#2a7' } })
      .png()
      .toBuffer();
    await page.getByLabel('Attach file', { exact: true }).setInputFiles({ name: 'green.png', mimeType: 'image/png', buffer: png });
    await page.getByLabel('Message', { exact: true }).fill('a green picture');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await waitFor('Carol to get the image', () =>
      carol.messages.find((message) => message.message?.imageMessage?.caption === 'a green picture'),
    );
    // Its preview, fetched with the key and shown from a blob: URL.
    const preview = messages.getByRole('img', { name: 'Image: a green picture', exact: true });
    await preview.waitFor();
    await waitFor('the preview to load', () =>
      page.evaluate<boolean>(`document.querySelector('img[alt="Image: a green picture"]')?.naturalWidth === 160`),
    );

    await messages.getByRole('button', { name: 'Reply to Hello from Carol', exact: true }).click();
    await page.getByLabel('Message', { exact: true }).fill('Replying to you');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const reply = await waitFor('Carol to get the reply', () =>
      carol.messages.find((message) => message.message?.extendedTextMessage?.text === 'Replying to you'),
    );
    expect(reply.message?.extendedTextMessage?.contextInfo?.stanzaId).toBe(first?.key.id);
    expect(await unnamedControls(page)).toEqual([]);
  }, 180_000);

  it('adds a webhook and shows a delivered entry in its deliveries', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByText('No webhooks yet').waitFor();
    await page.getByLabel('Webhook URL', { exact: true }).fill(gw.webhooks.url);
    await page.getByRole('button', { name: 'Add webhook', exact: true }).click();
    const webhook = page.getByRole('list', { name: 'Webhooks', exact: true }).getByRole('listitem').filter({ hasText: gw.webhooks.url });
    await webhook.waitFor();
    // Registrations take effect within seconds: messages until one reaches the receiver.
    await waitFor(
      'a message event at the webhook',
      async () => {
        await carol.sock!.sendMessage(accountJid, { text: `for the webhook ${Date.now()}` });
        return gw.webhooks.posts.length > 0;
      },
      { intervalMs: 2_000 },
    );
    await webhook.getByRole('button', { name: 'Deliveries', exact: true }).click();
    await webhook.getByRole('cell', { name: 'delivered', exact: true }).first().waitFor({ timeout: 30_000 });
    expect(await unnamedControls(page)).toEqual([]);
  });

  it("changes the account's settings in one save, and shows the API's error naming a wrong field", async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByLabel('Decline incoming calls', { exact: true }).check();
    await page.getByLabel('Message to a declined caller', { exact: true }).fill('Calls are not answered here; please write.');
    await page.getByLabel('Sends per minute', { exact: true }).fill('6');
    await page.getByLabel('Proxy URL', { exact: true }).fill('socks5://desk:pa55word@127.0.0.1:1080');
    await page.getByRole('button', { name: 'Save settings', exact: true }).click();
    await page.getByText('Settings saved.', { exact: false }).waitFor();
    // The answer is shown: the password masked.
    expect(await page.getByLabel('Proxy URL', { exact: true }).inputValue()).toBe('socks5://desk:***@127.0.0.1:1080');
    const stored = await api.call('GET', `/accounts/${ACCOUNT}/settings`, undefined, asAdmin);
    expect(stored.body.settings).toMatchObject({
      rejectCalls: true,
      callRejectMessage: 'Calls are not answered here; please write.',
      sendPolicy: { perMinute: 6, perHour: 300 },
      proxy: { url: 'socks5://desk:***@127.0.0.1:1080' },
    });

    await page.getByLabel('Shortest gap (ms)', { exact: true }).fill('9000');
    await page.getByRole('button', { name: 'Save settings', exact: true }).click();
    await page.getByRole('alert').getByText('sendPolicy.gapMs.min must not be above sendPolicy.gapMs.max', { exact: true }).waitFor();
    expect((await api.call('GET', `/accounts/${ACCOUNT}/settings`, undefined, asAdmin)).body.settings).toMatchObject({
      sendPolicy: { gapMs: { min: 2000, max: 6000 } },
    });
    expect(await unnamedControls(page)).toEqual([]);
  });

  it('creates an account key whose holder sees only that account', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByLabel('Key name', { exact: true }).fill('support desk');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const secret = (await page.locator('.secret-value').textContent())?.trim() ?? '';
    expect(secret.length).toBeGreaterThan(20);
    await page.getByRole('list', { name: 'Access keys', exact: true }).getByText('support desk').waitFor();
    expect(await unnamedControls(page)).toEqual([]);

    const holder = await openPage(browser, api.url);
    pages.push(holder);
    await holder.page.goto(`${api.url}/dashboard/#/`);
    await holder.page.getByLabel('Access key', { exact: true }).fill(secret);
    await holder.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await holder.page.getByRole('heading', { name: ACCOUNT, level: 1, exact: true }).waitFor();
    expect(await holder.page.getByRole('button', { name: 'Create account', exact: true }).count()).toBe(0);
    expect(await holder.page.getByRole('link', { name: 'Keys', exact: true }).count()).toBe(0);
    expect(await holder.page.getByRole('button', { name: 'Delete account', exact: true }).count()).toBe(0);
    await holder.page.getByRole('link', { name: /Carol|\+15550600002/ }).waitFor();
    // Another account's address still opens this one.
    await holder.page.goto(`${api.url}/dashboard/#/accounts/someoneelse/chats`);
    await holder.page.getByRole('heading', { name: ACCOUNT, level: 1, exact: true }).waitFor();
  });

  it('links a second account by pairing code, shows every status change on the list, disconnects, reconnects and deletes it', async () => {
    const { page } = admin;
    const second = 'console2';
    const secondPhone = '15550600003';
    await gw.control.createPhone(secondPhone);
    await page.getByRole('link', { name: 'Accounts', exact: true }).click();
    await page.getByLabel('Account id', { exact: true }).fill(second);
    await page.getByRole('button', { name: 'Create account', exact: true }).click();
    await page.getByRole('heading', { name: second, level: 1, exact: true }).waitFor();
    await page.getByLabel('Phone number', { exact: true }).fill(`+1 555-060-0003`);
    await page.getByRole('button', { name: 'Get pairing code', exact: true }).click();
    const shown = (await page.locator('.pairing-code strong').textContent()) ?? '';
    expect(shown).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    const paired = await gw.control.pair(secondPhone, shown.replace('-', ''));
    expect(paired.status).toBe(200);
    const state = page.locator('.account-state');
    await state.getByText('connected', { exact: true }).waitFor({ timeout: 30_000 });

    // The list shows each account's live status, and follows a change without a reload.
    await page.getByRole('link', { name: 'Accounts', exact: true }).click();
    const row = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: second, exact: true }) });
    await row.getByText('connected', { exact: true }).waitFor();
    await api.call('POST', `/accounts/${second}/disconnect`, undefined, asAdmin);
    const after = await waitFor('the disconnect to take effect', async () => {
      const account = (await api.call('GET', `/accounts/${second}`, undefined, asAdmin)).body.account as { currentStatus: string };
      return account.currentStatus !== 'connected' ? account.currentStatus : undefined;
    });
    await row.getByText(after, { exact: true }).waitFor();

    await row.getByRole('link', { name: second, exact: true }).click();
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await state.getByText('connected', { exact: true }).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await state.getByText('connected', { exact: true }).waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Delete account', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm delete', exact: true }).click();
    await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor();
    await page.getByRole('link', { name: ACCOUNT, exact: true }).waitFor();
    expect(await page.getByRole('link', { name: second, exact: true }).count()).toBe(0);
    expect((await api.call('GET', `/accounts/${second}`, undefined, asAdmin)).status).toBe(404);
    expect(await unnamedControls(page)).toEqual([]);
  }, 120_000);

  it('fits a phone screen (390×844) without sideways scrolling', async () => {
    const phone = await openPage(browser, api.url, { width: 390, height: 844 });
    pages.push(phone);
    await phone.page.goto(`${api.url}/dashboard/`);
    await phone.page.getByLabel('Access key', { exact: true }).fill(ADMIN_KEY);
    await phone.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await phone.page.getByRole('link', { name: ACCOUNT, exact: true }).waitFor();
    expect(await widerThanScreen(phone.page)).toEqual([]);
    await phone.page.getByRole('link', { name: ACCOUNT, exact: true }).click();
    await phone.page.getByRole('link', { name: /Carol|\+15550600002/ }).click();
    await phone.page.getByText('Hello from Carol', { exact: true }).first().waitFor();
    expect(await widerThanScreen(phone.page)).toEqual([]);
    await phone.page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await phone.page.getByRole('button', { name: 'Deliveries', exact: true }).click();
    await phone.page.getByRole('cell', { name: 'delivered', exact: true }).first().waitFor();
    expect(await widerThanScreen(phone.page)).toEqual([]);
    await phone.page.getByRole('link', { name: 'Settings', exact: true }).click();
    await phone.page.getByRole('button', { name: 'Save settings', exact: true }).waitFor();
    expect(await widerThanScreen(phone.page)).toEqual([]);
    expect(await unnamedControls(phone.page)).toEqual([]);
  });

  it('made no request to another host and had no script error', () => {
    for (const { errors, foreignRequests } of pages) {
      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
    }
  });
});
