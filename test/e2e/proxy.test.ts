import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCommandId } from '../../core/ids.js';
import type { AccountSettings } from '../../core/schemas/settings.js';
import { createAccount } from '../../core/store/accounts.js';
import { findMessage } from '../../core/store/messages.js';
import { fixtures } from '../support/media-fixtures.js';
import type { TestApi } from '../support/test-api.js';
import { startTestProxy, type TestProxy } from '../support/test-proxy.js';
import { waitFor } from '../support/wait.js';
import type { Gateway } from './support/gateway.js';
import { startEventGateway } from './support/webhook-events.js';

/**
 * An account's proxy on the sandbox with real Baileys (docs/sending.md, "Proxy"): the
 * WebSocket, a media upload and a media download go through the test proxy with the account's
 * credentials (HTTP CONNECT and SOCKS5); refused credentials and a proxy address forbidden at
 * connect time keep the account from connecting, and its `lastDisconnect` says why. The
 * connector logs at debug level here, and no line of it holds a proxy password.
 */
describe('story: an account behind its own proxy', { timeout: 240_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  let stop: (() => Promise<void>) | undefined;
  let httpProxy: TestProxy;
  let socksProxy: TestProxy;
  let httpsProxy: TestProxy;
  const credentials = { user: 'acct-alice', password: 'pr0xy-Secret' };
  const socksCredentials = { user: 'acct-carol', password: 's0cks-Secret' };
  const httpsCredentials = { user: 'acct-erin', password: 'tl5-Secret' };
  const wrongPassword = 'not-the-Password';
  const alice = { id: 'proxalice', phone: '15550910001' };
  const bob = { id: 'proxbob', phone: '15550910002' };
  const carol = { id: 'proxcarol', phone: '15550910003' };
  const jid = (phone: string) => `${phone}@s.whatsapp.net`;
  let wsHost: string;
  let mediaHost: string;

  async function link(who: { id: string; phone: string }, settings?: unknown) {
    await gw.control.createPhone(who.phone);
    const from = gw.logs.lines.length;
    const created = await api.call('POST', '/accounts', { id: who.id, ...(settings ? { settings } : {}) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await gw.linkAccount(who.id, who.phone, { logsFrom: from });
  }

  /** A document: uploaded as it is (an image would be decoded for its thumbnail first). */
  async function sendDocument(from: string, to: string): Promise<string> {
    const form = new FormData();
    form.set('to', jid(to));
    form.set('document', new Blob([new Uint8Array(fixtures.pdf)], { type: 'application/pdf' }), 'terms.pdf');
    const response = await fetch(`${api.url}/accounts/${from}/message/send/document`, { method: 'POST', body: form });
    const body = (await response.json()) as { messageId?: string };
    expect(response.status, JSON.stringify(body)).toBe(200);
    return String(body.messageId);
  }

  const tunnelsTo = (proxy: TestProxy, host: string) => proxy.tunnels.filter((t) => t.target === host);

  async function lastDisconnectOf(accountId: string) {
    const answer = await api.call('GET', `/accounts/${accountId}`);
    const account = answer.body.account as { status?: string; lastDisconnect?: { reason: string } } | undefined;
    return { status: account?.status, reason: account?.lastDisconnect?.reason };
  }

  beforeAll(async () => {
    // Debug level: Baileys' own lines included, to show that none of them holds a password.
    ({ gw, api, stop } = await startEventGateway({ logLevel: 'debug' }));
    httpProxy = await startTestProxy({ kind: 'http', credentials });
    socksProxy = await startTestProxy({ kind: 'socks5', credentials: socksCredentials });
    // Certified like the sandbox's media host: the connector trusts its CA in sandbox mode.
    httpsProxy = await startTestProxy({ kind: 'https', credentials: httpsCredentials, tls: gw.sandbox.tls });
    wsHost = new URL(gw.sandbox.descriptor.wsUrl).host;
    mediaHost = String(gw.sandbox.core.network.mediaHost);
    await link(bob);
  });
  afterAll(async () => {
    await stop?.();
    await httpProxy?.close();
    await socksProxy?.close();
    await httpsProxy?.close();
  });

  it('HTTP proxy: the account connects through it, with its credentials', async () => {
    await link(alice, { proxy: { url: httpProxy.url(credentials) } });
    expect(tunnelsTo(httpProxy, wsHost).length).toBeGreaterThan(0);
    expect(tunnelsTo(httpProxy, wsHost).every((t) => t.authorized)).toBe(true);
    const settings = await api.call('GET', `/accounts/${alice.id}/settings`);
    expect((settings.body.settings as { proxy: { url: string } }).proxy.url).toBe(`http://acct-alice:***@127.0.0.1:${httpProxy.port}`);
  });

  it("an incoming media's download and a media send's upload go through it", async () => {
    // The download first: undici keeps its tunnel open, so a later download may add no tunnel.
    expect(tunnelsTo(httpProxy, mediaHost)).toEqual([]);
    const received = await sendDocument(bob.id, alice.phone);
    await waitFor('alice to store the document with its media', async () => (await findMessage(gw.table, alice.id, received))?.mediaId);
    expect(tunnelsTo(httpProxy, mediaHost).length).toBeGreaterThan(0);

    const beforeUpload = tunnelsTo(httpProxy, mediaHost).length;
    const sent = await sendDocument(alice.id, bob.phone);
    expect(tunnelsTo(httpProxy, mediaHost).length).toBeGreaterThan(beforeUpload);
    await waitFor('bob to store the document', async () => (await findMessage(gw.table, bob.id, sent))?.mediaId);
    expect(httpProxy.tunnels.every((t) => t.authorized)).toBe(true);
  });

  it('SOCKS5 proxy: the account connects and uploads through it', async () => {
    await link(carol, { proxy: { url: socksProxy.url(socksCredentials) } });
    expect(tunnelsTo(socksProxy, wsHost).length).toBeGreaterThan(0);
    await sendDocument(carol.id, bob.phone);
    expect(tunnelsTo(socksProxy, mediaHost).length).toBeGreaterThan(0);
    expect(socksProxy.tunnels.every((t) => t.authorized)).toBe(true);
  });

  it('HTTPS proxy (TLS to the proxy): the account connects and uploads through it, with its credentials', async () => {
    const erin = { id: 'proxerin', phone: '15550910005' };
    await link(erin, { proxy: { url: httpsProxy.url(httpsCredentials) } });
    expect(tunnelsTo(httpsProxy, wsHost).length).toBeGreaterThan(0);
    await sendDocument(erin.id, bob.phone);
    expect(tunnelsTo(httpsProxy, mediaHost).length).toBeGreaterThan(0);
    expect(httpsProxy.tunnels.every((t) => t.authorized)).toBe(true);
    const settings = await api.call('GET', `/accounts/${erin.id}/settings`);
    expect((settings.body.settings as { proxy: { url: string } }).proxy.url).toBe(`https://acct-erin:***@127.0.0.1:${httpsProxy.port}`);
  });

  it('wrong credentials: the account does not connect, and says proxy_auth_failed; a PATCH fixing them is used at the next try', async () => {
    const dave = { id: 'proxwrong', phone: '15550910004' };
    await gw.control.createPhone(dave.phone);
    const refusedBefore = httpProxy.tunnels.filter((t) => !t.authorized).length;
    const created = await api.call('POST', '/accounts', {
      id: dave.id,
      settings: { proxy: { url: httpProxy.url({ user: credentials.user, password: wrongPassword }) } },
    });
    expect(created.status).toBe(201);
    const seen = await waitFor('proxwrong to report its proxy', async () => {
      const last = await lastDisconnectOf('proxwrong');
      return last.reason ? last : undefined;
    });
    expect(seen).toEqual({ status: 'connecting', reason: 'proxy_auth_failed' });
    expect(httpProxy.tunnels.filter((t) => !t.authorized).length).toBeGreaterThan(refusedBefore);
    const refusedTunnel = httpProxy.tunnels.find((t) => !t.authorized);
    expect(refusedTunnel?.target).toBe(wsHost);

    // The session retries with backoff, reading the settings of then: the next try links.
    const from = gw.logs.lines.length;
    const fixed = await api.call('PATCH', `/accounts/${dave.id}/settings`, { proxy: { url: httpProxy.url(credentials) } });
    expect(fixed.status).toBe(200);
    await gw.linkAccount(dave.id, dave.phone, { logsFrom: from });
  });

  it('wrong SOCKS5 credentials: proxy_auth_failed too', async () => {
    const created = await api.call('POST', '/accounts', {
      id: 'proxwrongsocks',
      settings: { proxy: { url: socksProxy.url({ user: socksCredentials.user, password: wrongPassword }) } },
    });
    expect(created.status).toBe(201);
    const seen = await waitFor('proxwrongsocks to report its proxy', async () => {
      const last = await lastDisconnectOf('proxwrongsocks');
      return last.reason ? last : undefined;
    });
    expect(seen).toEqual({ status: 'connecting', reason: 'proxy_auth_failed' });
    expect((await api.call('DELETE', '/accounts/proxwrongsocks')).status).toBe(200);
  });

  it('a proxy on the metadata address: refused by PATCH, and at connect time when stored anyway', async () => {
    const patched = await api.call('PATCH', `/accounts/${bob.id}/settings`, { proxy: { url: 'http://169.254.169.254:3128' } });
    expect(patched.status).toBe(400);
    expect(patched.body.error).toBe('proxy.url targets a forbidden address');

    // As if its name had been re-pointed after the PATCH's check: only the connect-time check stands.
    const id = 'proxmeta';
    const { settings: bobs } = (await api.call('GET', `/accounts/${bob.id}/settings`)).body as { settings: AccountSettings };
    const settings = { ...bobs, proxy: { url: 'http://user:metaPass@169.254.169.254:3128' } };
    await createAccount(gw.table, { id, collectionName: `auth_${id}`, status: 'connecting', settings });
    await gw.queues.sendCommand({ type: 'connect', accountId: id, commandId: newCommandId(), payload: {} });
    const seen = await waitFor('proxmeta to report its proxy', async () => {
      const last = await lastDisconnectOf(id);
      return last.reason ? last : undefined;
    });
    expect(seen).toEqual({ status: 'connecting', reason: 'proxy_forbidden' });
    expect((await api.call('DELETE', `/accounts/${id}`)).status).toBe(200);
  });

  it('a proxy set on a connected account: the live connection stays, the next connect goes through it', async () => {
    const before = tunnelsTo(httpProxy, wsHost).length;
    const from = gw.logs.lines.length;
    expect((await api.call('PATCH', `/accounts/${bob.id}/settings`, { proxy: { url: httpProxy.url(credentials) } })).status).toBe(200);
    await gw.logs.waitForLine('bob: settings applied', (l) => l.accountId === bob.id && l.msg === 'account settings applied', { from });
    expect((await lastDisconnectOf(bob.id)).status).toBe('connected');
    expect(tunnelsTo(httpProxy, wsHost).length).toBe(before);

    expect((await api.call('POST', `/accounts/${bob.id}/disconnect`)).status).toBe(200);
    await gw.waitForStatus(bob.id, 'not_started');
    expect((await api.call('POST', `/accounts/${bob.id}/connect`)).status).toBe(200);
    await gw.waitForStatus(bob.id, 'connected');
    expect(tunnelsTo(httpProxy, wsHost).length).toBeGreaterThan(before);
  });

  it('no log line holds a proxy password (debug level)', () => {
    const text = gw.logs.lines.map((line) => JSON.stringify(line)).join('\n');
    expect(gw.logs.lines.some((line) => line.msg === 'connecting through the proxy')).toBe(true);
    for (const secret of [credentials.password, socksCredentials.password, wrongPassword, 'metaPass']) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(encodeURIComponent(secret));
      expect(text).not.toContain(Buffer.from(`${credentials.user}:${secret}`).toString('base64'));
    }
  });
});
