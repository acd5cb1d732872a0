import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkError, linkOnSandbox, parseLinkArgs } from '../../../infra/local/sandbox-link.js';
import { startSandbox, type RunningSandbox } from '../../../sandbox/index.js';
import { SandboxClient } from '../../sandbox/support/sandbox-client.js';

/**
 * The helper against a real sandbox and a real Baileys client waiting for a scan. The account
 * routes are served here in the shape of the gateway's `GET /accounts/:accountId` and
 * `GET /accounts/:accountId/qr` (`{ok, qr, expiresAt}`, 404 `No QR code available` until the
 * first QR), standing in for a gateway whose session is the client below; the whole stack with
 * the real routes runs in start-sandbox.test.ts.
 */
let sandbox: RunningSandbox;
let api: Server;
let apiUrl: string;
const clients: SandboxClient[] = [];
const seenKeys: Array<string | undefined> = [];
let waiting: SandboxClient | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  api = createServer((req, res) => {
    seenKeys.push(req.headers['x-api-key'] as string | undefined);
    const reply = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const match = /^\/accounts\/([^/]+)(\/qr)?$/.exec(req.url ?? '');
    if (match?.[1] !== 'alice' || !waiting) return reply(404, { ok: false, error: 'Account not found' });
    const currentStatus = waiting.openCount > 0 ? 'connected' : 'connecting';
    if (!match[2]) return reply(200, { ok: true, account: { _id: 'alice', currentStatus } });
    if (currentStatus !== 'connecting' || !waiting.qr) return reply(404, { ok: false, error: 'No QR code available' });
    return reply(200, { ok: true, qr: waiting.qr, expiresAt: Date.now() + 20_000 });
  });
  await new Promise<void>((resolveListen) => api.listen(0, '127.0.0.1', resolveListen));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const client of clients) await client.stop();
  await new Promise((resolveClose) => api.close(resolveClose));
  await sandbox.stop();
});

describe('npm run sandbox:link', () => {
  it('creates the phone, scans the QR the API shows, and waits for connected', async () => {
    const target = { apiUrl, sandboxControlUrl: sandbox.descriptor.controlUrl, apiKey: 'k1' };
    waiting = new SandboxClient(sandbox.descriptor);
    clients.push(waiting);
    waiting.start();

    const result = await linkOnSandbox(target, { accountId: 'alice', phone: '15550009001' });
    expect(result).toEqual({ accountId: 'alice', phone: '15550009001', jid: '15550009001:1@s.whatsapp.net', status: 'connected' });
    expect(waiting.jid).toBe('15550009001:1@s.whatsapp.net');
    expect(new Set(seenKeys)).toEqual(new Set(['k1']));

    // Connected already: nothing to scan.
    expect(await linkOnSandbox(target, { accountId: 'alice', phone: '15550009001' })).toEqual({
      accountId: 'alice',
      phone: '15550009001',
      status: 'connected',
    });
  });

  it('says what to do when the account is missing or the stack is not running', async () => {
    const target = { apiUrl, sandboxControlUrl: sandbox.descriptor.controlUrl };
    await expect(linkOnSandbox(target, { accountId: 'bob', phone: '15550009002' })).rejects.toThrow(/no account "bob": create it first/);
    await expect(
      linkOnSandbox({ ...target, sandboxControlUrl: 'http://127.0.0.1:1' }, { accountId: 'bob', phone: '15550009002' }),
    ).rejects.toThrow(/cannot reach http:\/\/127\.0\.0\.1:1 .*npm start -- --sandbox/);
    await expect(linkOnSandbox(target, { accountId: 'bob', phone: 'not-a-phone' })).rejects.toThrow(
      /sandbox phone not-a-phone: phone: phone must be 5-20 digits/,
    );
  });

  it('reads <accountId> <phone> [--qr <text>]', () => {
    expect(parseLinkArgs(['alice', '15550000001'])).toEqual({ accountId: 'alice', phone: '15550000001' });
    expect(parseLinkArgs(['alice', '15550000001', '--qr', 'a,b'])).toEqual({ accountId: 'alice', phone: '15550000001', qr: 'a,b' });
    expect(() => parseLinkArgs(['alice'])).toThrow(LinkError);
    expect(() => parseLinkArgs(['alice', '1', '2'])).toThrow(/usage: npm run sandbox:link/);
    expect(() => parseLinkArgs(['alice', '15550000001', '--qr'])).toThrow(/usage/);
  });
});
