import { createServer, get, type Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { accountProxy, type AccountProxy } from '../../../connector/network/account-proxy.js';
import type { LookupAll } from '../../../core/net/webhook-target.js';
import { startTestProxy, type TestProxy } from '../../support/test-proxy.js';

/**
 * The agents of an account's proxy against the test proxy (both kinds) and a local target: the
 * tunnel is asked with the credentials, refused credentials and forbidden addresses fail with
 * the reason the account's status reports, and a forbidden address is never connected to.
 */
const credentials = { user: 'acct', password: 's3cret:@/x' };
const allowPrivate = { allowPrivate: true };

let target: Server;
let targetPort: number;
const opened: AccountProxy[] = [];

beforeAll(async () => {
  target = createServer((_req, res) => res.end('through'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetPort = (target.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => target.close(() => resolve()));
});
afterEach(() => {
  for (const proxy of opened.splice(0)) proxy.close();
});

function proxyOf(url: string, options: { lookupAll?: LookupAll; allow?: boolean } = {}): AccountProxy {
  const proxy = accountProxy(url, {
    policy: options.allow === false ? { allowPrivate: false } : allowPrivate,
    ...(options.lookupAll ? { lookupAll: options.lookupAll } : {}),
  });
  opened.push(proxy);
  return proxy;
}

/** A GET through `agent`: the body, or the error it failed with. */
function getThrough(agent: Agent, host = '127.0.0.1'): Promise<string | Error> {
  return new Promise((resolve) => {
    const req = get({ host, port: targetPort, path: '/', agent }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve(body));
    });
    req.on('error', resolve);
  });
}

describe.each(['http', 'socks5'] as const)('%s proxy', (kind) => {
  let proxy: TestProxy;
  beforeAll(async () => {
    proxy = await startTestProxy({ kind, credentials });
  });
  afterAll(async () => {
    await proxy.close();
  });

  it('the socket agent tunnels to the target with the credentials', async () => {
    const from = proxy.tunnels.length;
    const agents = proxyOf(proxy.url(credentials));
    expect(await getThrough(agents.agent)).toBe('through');
    expect(proxy.tunnels.slice(from)).toEqual([{ target: `127.0.0.1:${targetPort}`, authorized: true }]);
    expect(agents.failure()).toBeUndefined();
  });

  it('uploads (fetchAgent) and downloads (the fetch dispatcher) go through it too', async () => {
    const from = proxy.tunnels.length;
    const agents = proxyOf(proxy.url(credentials));
    expect(await getThrough(agents.fetchAgent)).toBe('through');
    const answer = await fetch(`http://127.0.0.1:${targetPort}/`, { dispatcher: agents.downloadDispatcher });
    expect(await answer.text()).toBe('through');
    expect(proxy.tunnels.slice(from)).toEqual([
      { target: `127.0.0.1:${targetPort}`, authorized: true },
      { target: `127.0.0.1:${targetPort}`, authorized: true },
    ]);
  });

  it('wrong credentials: the request fails as proxy_auth_failed, and the socket agent says so', async () => {
    const from = proxy.tunnels.length;
    const agents = proxyOf(proxy.url({ user: 'acct', password: 'wrong' }));
    const failed = await getThrough(agents.agent);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error & { failure?: string }).failure).toBe('proxy_auth_failed');
    expect(agents.failure()).toBe('proxy_auth_failed');
    expect(String((failed as Error).message)).not.toContain('wrong');
    expect(proxy.tunnels.slice(from).map((t) => t.authorized)).toEqual([false]);
  });
});

describe('the proxy address, checked at connect time', () => {
  it('a name that resolves to the metadata address is refused before any connection', async () => {
    const asked: string[] = [];
    const metadata: LookupAll = (hostname, _options, callback) => {
      asked.push(hostname);
      callback(null, [{ address: '169.254.169.254', family: 4 }]);
    };
    const agents = proxyOf('http://user:pw@proxy.example.test:3128', { lookupAll: metadata });
    const failed = await getThrough(agents.agent);
    expect((failed as Error & { failure?: string }).failure).toBe('proxy_forbidden');
    expect(String((failed as Error).message)).toContain('169.254.169.254');
    expect(agents.failure()).toBe('proxy_forbidden');
    expect(asked).toEqual(['proxy.example.test']);
    const download = await fetch(`http://127.0.0.1:${targetPort}/`, { dispatcher: agents.downloadDispatcher }).catch((e: unknown) => e);
    expect(download).toBeInstanceOf(Error);
  });

  it('a SOCKS5 proxy by name is checked the same way', async () => {
    const metadata: LookupAll = (_hostname, _options, callback) => callback(null, [{ address: '169.254.169.254', family: 4 }]);
    const agents = proxyOf('socks5://proxy.example.test:1080', { lookupAll: metadata });
    expect(((await getThrough(agents.agent)) as Error & { failure?: string }).failure).toBe('proxy_forbidden');
  });

  it('an IP address is judged by the URL (a stored metadata address; loopback without WEBHOOK_ALLOW_PRIVATE)', async () => {
    const metadata = proxyOf('http://169.254.169.254:3128');
    expect(((await getThrough(metadata.agent)) as Error & { failure?: string }).failure).toBe('proxy_forbidden');
    const proxy = await startTestProxy();
    try {
      const loopback = proxyOf(proxy.url(), { allow: false });
      expect(((await getThrough(loopback.agent)) as Error & { failure?: string }).failure).toBe('proxy_forbidden');
      expect(proxy.tunnels).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('a proxy that is not there: proxy_failed', async () => {
    const proxy = await startTestProxy();
    const url = proxy.url();
    await proxy.close();
    const agents = proxyOf(url);
    expect(((await getThrough(agents.agent)) as Error & { failure?: string }).failure).toBe('proxy_failed');
  });
});
