import { describe, expect, it } from 'vitest';
import { createApp } from '../../../functions/app.js';
import { silentLogger, useTestStack } from '../../support/test-stack.js';

/** GET /me through the app, with an account key made through the API as an admin makes one. */
const ADMIN_KEY = 'me-admin-0123456789abcdef';
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

const testStack = useTestStack({ overrides: { API_KEY: ADMIN_KEY } });
const appWith = (apiKey: string | undefined) =>
  createApp({ config: { ...testStack.stack.config, API_KEY: apiKey }, clients: testStack.stack.clients, logger: silentLogger });

let counter = 0;

async function me(app: ReturnType<typeof createApp>, headers: Record<string, string> = {}) {
  const response = await app.request('/me', { headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

describe('GET /me', () => {
  it('without API_KEY: 200 {ok, role: "open"}, with or without a key', async () => {
    const app = appWith(undefined);
    expect(await me(app)).toMatchObject({ status: 200, body: { ok: true, role: 'open' } });
    expect((await me(app, { authorization: 'Bearer anything' })).body).toEqual({ ok: true, role: 'open' });
  });

  it('an admin key: 200 {ok, role: "admin"}, as Bearer or X-Api-Key', async () => {
    const app = appWith(ADMIN_KEY);
    expect(await me(app, admin)).toMatchObject({ status: 200, body: { ok: true, role: 'admin' } });
    expect((await me(app, { 'x-api-key': ADMIN_KEY })).body).toEqual({ ok: true, role: 'admin' });
  });

  it('an account key: 200 {ok, role: "account", accountId} with its own account', async () => {
    const app = appWith(ADMIN_KEY);
    const id = `me${Date.now().toString(36)}${counter++}`;
    const post = (path: string, body: unknown) =>
      app.request(path, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/accounts', { id })).status).toBe(201);
    const created = await post(`/accounts/${id}/keys`, { name: 'console' });
    expect(created.status).toBe(201);
    const { secret } = (await created.json()) as { secret: string };
    expect(await me(app, { authorization: `Bearer ${secret}` })).toMatchObject({
      status: 200,
      body: { ok: true, role: 'account', accountId: id },
    });
    expect((await me(app, { 'x-api-key': secret })).body).toEqual({ ok: true, role: 'account', accountId: id });
  });

  it('with API_KEY and no key, or an unknown one: 401 Unauthorized with WWW-Authenticate: Bearer', async () => {
    const app = appWith(ADMIN_KEY);
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer not-a-key' },
      { 'x-api-key': 'wag_nosuch_0000000000000000_x' },
    ]) {
      const { status, body, headers: answered } = await me(app, headers);
      expect({ status, body }).toEqual({ status: 401, body: { ok: false, error: 'Unauthorized' } });
      expect(answered.get('www-authenticate')).toBe('Bearer');
    }
  });
});
