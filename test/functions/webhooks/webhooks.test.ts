import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/config.js';
import { listWebhooks } from '../../../core/store/webhooks.js';
import { tableOf } from '../../../core/store/table.js';
import { createApp } from '../../../functions/app.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

function appWith(allowPrivate: boolean) {
  const config = loadConfig({ ...stack.env, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE: String(allowPrivate) });
  return createApp({ config, clients: stack.clients, logger: silentLogger });
}

async function register(allowPrivate: boolean, url: unknown) {
  const response = await appWith(allowPrivate).request('/webhooks', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const FORBIDDEN = { ok: false, error: 'url targets a forbidden address' };
let seq = 0;
/** A distinct path per case, so that a 201 is never a 200 because an earlier case registered it. */
const path = () => `/hook${Date.now().toString(36)}${seq++}`;

describe('POST /webhooks: target addresses', () => {
  const alwaysRefused = [
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://0xa9fea9fe/',
    'http://2852039166/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://metadata.google.internal./',
    'http://0.0.0.0:9/',
    'http://0/',
    'http://[::]/',
    'http://224.0.0.251/',
    'http://255.255.255.255/',
    'http://user:pass@hooks.example.com/',
    'http://user:pass@127.0.0.1:9/',
  ];
  it.each(alwaysRefused)('%s: 400 url targets a forbidden address, even with WEBHOOK_ALLOW_PRIVATE=true', async (url) => {
    expect(await register(true, url)).toEqual({ status: 400, body: FORBIDDEN });
    expect(await register(false, url)).toEqual({ status: 400, body: FORBIDDEN });
  });

  const privateTargets = [
    'http://127.0.0.1:8080',
    'http://2130706433:8080',
    'http://0x7f.1:8080',
    'http://017700000001:8080',
    'http://[::1]:8080',
    'http://[::ffff:127.0.0.1]:8080',
    'http://10.0.0.5',
    'http://172.16.4.4',
    'http://192.168.1.10',
    'http://100.64.0.9',
    'http://[fd12::5]',
    'http://localhost:8080',
  ];
  it.each(privateTargets)('%s: 400 by default, 201 with WEBHOOK_ALLOW_PRIVATE=true', async (origin) => {
    const url = `${origin}${path()}`;
    expect(await register(false, url)).toEqual({ status: 400, body: FORBIDDEN });
    expect(await register(true, url)).toMatchObject({ status: 201, body: { ok: true, created: true } });
  });

  it('a refused URL is not stored', async () => {
    const url = `http://169.254.169.254${path()}`;
    await register(true, url);
    const stored = await listWebhooks(tableOf(stack.config, stack.clients));
    expect(stored.map((w) => w.url)).not.toContain(url);
  });

  it('a public address or a name that does not resolve (yet) is accepted', async () => {
    expect(await register(false, `https://8.8.8.8${path()}`)).toMatchObject({ status: 201 });
    expect(await register(false, `https://receiver.invalid${path()}`)).toMatchObject({ status: 201 });
  });

  it('malformed URLs keep their own error', async () => {
    for (const url of ['not a url', 'ftp://127.0.0.1/', 'http://[fe80::1%25eth0]/', 42]) {
      expect(await register(true, url)).toEqual({
        status: 400,
        body: { ok: false, error: 'url must be a valid http or https URL' },
      });
    }
  });
});
