import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { findAccount } from '../../../core/store/accounts.js';
import { tableOf } from '../../../core/store/table.js';
import { createApp } from '../../../functions/app.js';
import { warnWhenOpen } from '../../../functions/http/auth.js';
import { startApiServer } from '../../../functions/server.js';
import { logSink } from '../../support/log-sink.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';
import type { TestStack } from '../../support/test-stack.js';

/** Access keys through the HTTP API, with two admin keys configured (a rotation in progress). */
const ADMIN_OLD = 'admin-old-0123456789abcdef';
const ADMIN_NEW = 'admin-new-fedcba9876543210';

let stack: TestStack;
let api: TestApi;
let stopStack: (() => Promise<void>) | undefined;
let counter = 0;
const newId = () => `keys${Date.now().toString(36)}${counter++}`;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const admin = bearer(ADMIN_NEW);

beforeAll(async () => {
  ({ stack, api, stop: stopStack } = await startApiStack({ overrides: { API_KEY: ` ${ADMIN_OLD} , ${ADMIN_NEW} ` } }));
});
afterAll(async () => {
  await stopStack?.();
});

async function accountWithKey(name?: string) {
  const id = newId();
  expect((await api.call('POST', '/accounts', { id }, admin)).status).toBe(201);
  const created = await api.call('POST', `/accounts/${id}/keys`, name === undefined ? undefined : { name }, admin);
  expect(created.status).toBe(201);
  return { id, secret: String(created.body.secret), key: created.body.key as Record<string, unknown> };
}

describe('without a key', () => {
  it('a protected route: 401 Unauthorized with WWW-Authenticate: Bearer', async () => {
    const { status, body, headers } = await api.call('GET', '/accounts');
    expect({ status, body }).toEqual({ status: 401, body: { ok: false, error: 'Unauthorized' } });
    expect(headers.get('www-authenticate')).toBe('Bearer');
  });

  it('an unknown account is 401, not 404: authentication comes first', async () => {
    expect(await api.call('GET', '/accounts/nosuchaccount/chats')).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect(await api.call('POST', '/accounts/nosuchaccount/message/send', { to: 'x' })).toMatchObject({ status: 401 });
    expect(await api.call('GET', '/no/such/route')).toMatchObject({ status: 401 });
  });

  it('/ping and /openapi.json stay public', async () => {
    expect((await api.call('GET', '/ping')).status).toBe(200);
    expect((await api.call('GET', '/openapi.json')).status).toBe(200);
  });

  it('an unknown key, or a blank one, is 401', async () => {
    expect((await api.call('GET', '/accounts', undefined, bearer('not-a-key'))).status).toBe(401);
    expect((await api.call('GET', '/accounts', undefined, { 'x-api-key': 'not-a-key' })).status).toBe(401);
    expect((await api.call('GET', '/accounts', undefined, { authorization: 'Bearer ' })).status).toBe(401);
    expect((await api.call('GET', '/accounts', undefined, { authorization: `Basic ${ADMIN_NEW}` })).status).toBe(401);
  });
});

describe('admin keys (API_KEY)', () => {
  it('both keys of a rotation work, as Bearer or X-Api-Key', async () => {
    for (const key of [ADMIN_OLD, ADMIN_NEW]) {
      expect((await api.call('GET', '/accounts', undefined, bearer(key))).status).toBe(200);
      expect((await api.call('GET', '/accounts', undefined, { 'x-api-key': key })).status).toBe(200);
    }
  });

  it('an admin key reaches the spec routes as before (unknown account: 404)', async () => {
    expect(await api.call('GET', '/accounts/nosuchaccount', undefined, admin)).toEqual(
      expect.objectContaining({ status: 404, body: { ok: false, error: 'Account not found' } }),
    );
  });
});

describe('account keys', () => {
  it('create: 201 {ok, key: {keyId, name, createdAt}, secret}; listed without the secret', async () => {
    const { id, secret, key } = await accountWithKey('crm');
    expect(key).toEqual({ keyId: expect.stringMatching(/^[0-9a-f]{16}$/), name: 'crm', createdAt: expect.any(String) });
    expect(new Date(String(key.createdAt)).toISOString()).toBe(key.createdAt);
    expect(secret).toMatch(new RegExp(`^wag_${id}_${String(key.keyId)}_[A-Za-z0-9_-]{43}$`));
    const listed = await api.call('GET', `/accounts/${id}/keys`, undefined, admin);
    expect(listed).toMatchObject({ status: 200, body: { ok: true, keys: [key] } });
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(-43));
  });

  it('a key without a name has no name field', async () => {
    const { key } = await accountWithKey();
    expect(Object.keys(key).sort()).toEqual(['createdAt', 'keyId']);
  });

  it('create with a bad name: 400; on an unknown account: 404 Account not found', async () => {
    const { id } = await accountWithKey();
    expect(await api.call('POST', `/accounts/${id}/keys`, { name: 5 }, admin)).toMatchObject({
      status: 400,
      body: { ok: false, error: 'name must be a string' },
    });
    expect(await api.call('POST', '/accounts/nosuchaccount/keys', {}, admin)).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Account not found' },
    });
  });

  it("reaches its own account's routes, by Bearer or X-Api-Key", async () => {
    const { id, secret } = await accountWithKey();
    expect(await api.call('GET', `/accounts/${id}`, undefined, bearer(secret))).toMatchObject({
      status: 200,
      body: { account: { _id: id } },
    });
    expect((await api.call('GET', `/accounts/${id}/status`, undefined, { 'x-api-key': secret })).status).toBe(200);
    expect((await api.call('GET', `/accounts/${id}/chats`, undefined, bearer(secret))).status).toBe(200);
    expect(await api.call('GET', `/accounts/${id}/qr`, undefined, bearer(secret))).toMatchObject({
      status: 404,
      body: { error: 'No QR code available' },
    });
  });

  it('anything else is 403 Forbidden: other accounts, the account list, webhooks, deleting, keys', async () => {
    const { id, secret } = await accountWithKey();
    const other = await accountWithKey();
    const forbidden: Array<[string, string]> = [
      ['GET', `/accounts/${other.id}`],
      ['GET', `/accounts/${other.id}/chats`],
      ['GET', '/accounts'],
      ['POST', '/accounts'],
      ['GET', '/webhooks'],
      ['DELETE', `/accounts/${id}`],
      ['GET', `/accounts/${id}/keys`],
      ['POST', `/accounts/${id}/keys`],
      ['DELETE', `/accounts/${id}/keys/0000000000000000`],
      ['GET', `/accounts/${id}0/chats`],
      // Percent-encoded and doubled separators are judged as the router reads them.
      ['GET', `/accounts/${id}/%6Beys`],
      ['GET', `/accounts/${id}//keys`],
      ['GET', `/accounts/${other.id.replace(/^k/, '%6B')}/chats`],
      ['DELETE', `/accounts/${id}/`],
    ];
    for (const [method, path] of forbidden) {
      const { status, body } = await api.call(method, path, method === 'POST' ? {} : undefined, bearer(secret));
      expect({ method, path, status, body }).toEqual({ method, path, status: 403, body: { ok: false, error: 'Forbidden' } });
    }
    expect(await findAccount(tableOf(stack.config, stack.clients), id)).toBeDefined();
  });

  it('a key with the right account and id but another secret is 401', async () => {
    const { id, secret } = await accountWithKey();
    const tampered = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    expect((await api.call('GET', `/accounts/${id}`, undefined, bearer(tampered))).status).toBe(401);
  });

  it('a use sets lastUsedAt (Unix ms), written off the request path', async () => {
    const { id, secret } = await accountWithKey();
    const before = Date.now();
    expect((await api.call('GET', `/accounts/${id}`, undefined, bearer(secret))).status).toBe(200);
    await expect
      .poll(async () => {
        const { body } = await api.call('GET', `/accounts/${id}/keys`, undefined, admin);
        return (body.keys as Array<{ lastUsedAt?: number }>)[0]?.lastUsedAt;
      })
      .toBeGreaterThanOrEqual(before);
  });

  it('revoke: 200 Key revoked, then the key is 401; again: 404 Key not found', async () => {
    const { id, secret, key } = await accountWithKey();
    expect((await api.call('GET', `/accounts/${id}`, undefined, bearer(secret))).status).toBe(200);
    expect(await api.call('DELETE', `/accounts/${id}/keys/${String(key.keyId)}`, undefined, admin)).toMatchObject({
      status: 200,
      body: { ok: true, message: 'Key revoked' },
    });
    expect((await api.call('GET', `/accounts/${id}`, undefined, bearer(secret))).status).toBe(401);
    expect(await api.call('DELETE', `/accounts/${id}/keys/${String(key.keyId)}`, undefined, admin)).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Key not found' },
    });
    expect((await api.call('DELETE', `/accounts/${id}/keys/not-an-id!`, undefined, admin)).body.error).toBe('Key not found');
    expect((await api.call('GET', `/accounts/${id}/keys`, undefined, admin)).body.keys).toEqual([]);
  });

  it('deleting the account revokes its keys for good: the same id again starts with none', async () => {
    const { id, secret } = await accountWithKey();
    expect((await api.call('DELETE', `/accounts/${id}`, undefined, admin)).status).toBe(200);
    expect((await api.call('POST', '/accounts', { id }, admin)).status).toBe(201);
    expect((await api.call('GET', `/accounts/${id}`, undefined, bearer(secret))).status).toBe(401);
    expect((await api.call('GET', `/accounts/${id}/keys`, undefined, admin)).body).toEqual({ ok: true, keys: [] });
  });

  it('the OpenAPI document describes the key routes and both ways to send a key', async () => {
    const { body } = await api.call('GET', '/openapi.json');
    const paths = body.paths as Record<string, Record<string, { summary?: string }>>;
    expect(paths['/accounts/{accountId}/keys']?.post?.summary).toMatch(/\w{3}/);
    expect(paths['/accounts/{accountId}/keys']?.get?.summary).toMatch(/\w{3}/);
    expect(paths['/accounts/{accountId}/keys/{keyId}']?.delete?.summary).toMatch(/\w{3}/);
    expect(body.components).toMatchObject({
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
    });
    expect(paths['/ping']?.get).toMatchObject({ security: [] });
  });
});

describe('without API_KEY', () => {
  it('the API is open, keys or not', async () => {
    const app = createApp({ config: { ...stack.config, API_KEY: undefined }, clients: stack.clients, logger: pino({ level: 'silent' }) });
    expect((await app.request('/accounts')).status).toBe(200);
    expect((await app.request('/accounts', { headers: bearer('anything') })).status).toBe(200);
  });

  const capture = () => logSink('info');

  it('listening beyond loopback: one warn line naming API_KEY; on loopback or with a key: none', () => {
    const open = capture();
    warnWhenOpen(open.logger, undefined, '0.0.0.0');
    expect(open.lines).toEqual([expect.objectContaining({ level: 40, msg: expect.stringContaining('API_KEY') })]);
    const quiet = capture();
    for (const host of ['127.0.0.1', 'localhost', '::1']) warnWhenOpen(quiet.logger, undefined, host);
    warnWhenOpen(quiet.logger, ADMIN_NEW, '0.0.0.0');
    warnWhenOpen(quiet.logger, ' , ', '127.0.0.1');
    expect(quiet.lines).toEqual([]);
  });

  it('the server itself runs the check: on loopback it logs no warning', async () => {
    const { lines, logger } = capture();
    const server = await startApiServer({
      config: { ...stack.config, API_KEY: undefined },
      clients: stack.clients,
      logger,
      port: 0,
      host: '127.0.0.1',
    });
    await server.close();
    expect(lines.filter((l) => l.msg?.includes('API_KEY'))).toEqual([]);
  });
});
