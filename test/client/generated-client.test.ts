import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type components, createGatewayClient, formDataOf } from '../../client/index.js';
import { updateAccountStatus } from '../../core/store/accounts.js';
import { tableOf } from '../../core/store/table.js';
import { generatedSchema, SCHEMA_FILE } from '../../infra/client/generate.js';
import type { FakeConnector } from '../support/fake-connector.js';
import { fixtures } from '../support/media-fixtures.js';
import { startApiStack, type TestApi } from '../support/test-api.js';
import type { TestStack } from '../support/test-stack.js';

/** The typed client of client/: current with the API's document, and working against a running API. */
const ADMIN_KEY = 'client-admin-0123456789abcdef';

describe('client/schema.ts', () => {
  it('is exactly what `npm run client:generate` writes from the served document', async () => {
    const generated = await generatedSchema();
    expect(readFileSync(SCHEMA_FILE, 'utf8') === generated, 'client/schema.ts is out of date: run `npm run client:generate`').toBe(true);
  });
});

describe('createGatewayClient against the API', () => {
  let stack: TestStack;
  let api: TestApi;
  let connector: FakeConnector;
  let stop: (() => Promise<void>) | undefined;
  let counter = 0;
  const newId = () => `client${Date.now().toString(36)}${counter++}`;

  beforeAll(async () => {
    ({ stack, api, connector, stop } = await startApiStack({ overrides: { API_KEY: ADMIN_KEY } }));
  });
  afterAll(async () => {
    await stop?.();
  });

  it('an admin key: creates an account, lists it, and GET /me says admin', async () => {
    const client = createGatewayClient({ baseUrl: api.url, key: ADMIN_KEY });
    const id = newId();
    const created = await client.POST('/accounts', { body: { id, name: 'Sales' } });
    expect(created.response.status).toBe(201);
    expect(created.data?.account).toMatchObject({ _id: id, name: 'Sales' });

    const listed = await client.GET('/accounts');
    expectTypeOf(listed.data?.accounts).toEqualTypeOf<components['schemas']['Account'][] | undefined>();
    expect(listed.data?.accounts.map((account) => account._id)).toContain(id);

    const me = await client.GET('/me');
    expectTypeOf(me.data?.role).toEqualTypeOf<'admin' | 'account' | 'open' | undefined>();
    expect(me.data).toEqual({ ok: true, role: 'admin' });
  });

  it('an account key: GET /me names its account, which it reaches with path parameters; elsewhere the error body is typed', async () => {
    const admin = createGatewayClient({ baseUrl: api.url, key: ADMIN_KEY });
    const id = newId();
    expect((await admin.POST('/accounts', { body: { id } })).response.status).toBe(201);
    const key = await admin.POST('/accounts/{accountId}/keys', { params: { path: { accountId: id } }, body: { name: 'console' } });
    const secret = key.data?.secret;
    if (!secret) throw new Error(`no key created: ${JSON.stringify(key.error)}`);

    const client = createGatewayClient({ baseUrl: api.url, key: secret });
    const me = await client.GET('/me');
    expect(me.data).toEqual({ ok: true, role: 'account', accountId: id });
    const status = await client.GET('/accounts/{accountId}/status', { params: { path: { accountId: me.data?.accountId ?? '' } } });
    expect(status.data).toMatchObject({ ok: true, accountId: id });

    const forbidden = await client.GET('/accounts');
    expect(forbidden.response.status).toBe(403);
    expectTypeOf(forbidden.error).toEqualTypeOf<components['schemas']['Error'] | undefined>();
    expect(forbidden.error).toEqual({ ok: false, error: 'Forbidden' });
  });

  it('sends a text (with an Idempotency-Key) and an image (multipart, formDataOf) to a connected account', async () => {
    const client = createGatewayClient({ baseUrl: api.url, key: ADMIN_KEY });
    const accountId = newId();
    expect((await client.POST('/accounts', { body: { id: accountId } })).response.status).toBe(201);
    await updateAccountStatus(tableOf(stack.config, stack.clients), accountId, { status: 'connected' });
    const path = { accountId };

    const text = await client.POST('/accounts/{accountId}/message/send', {
      params: { path, header: { 'idempotency-key': `hello-${accountId}` } },
      body: { to: '15550001111@s.whatsapp.net', message: 'Hello' },
    });
    expect(text.error).toBeUndefined();
    expect(text.data).toEqual({ ok: true, messageId: expect.any(String) });

    const image = await client.POST('/accounts/{accountId}/message/send/image', {
      params: { path },
      body: { to: '15550001111@s.whatsapp.net', image: new Blob([new Uint8Array(fixtures.png)], { type: 'image/png' }), caption: 'A dot' },
      bodySerializer: formDataOf,
    });
    expect(image.error).toBeUndefined();
    expect(image.data).toEqual({ ok: true, messageId: expect.any(String) });
    expect(connector.sent.filter((send) => send.accountId === accountId).map((send) => send.messageId)).toEqual([
      text.data?.messageId,
      image.data?.messageId,
    ]);
  });

  it('no key: 401 Unauthorized as the error; /ping, public, answers', async () => {
    const client = createGatewayClient({ baseUrl: api.url });
    const me = await client.GET('/me');
    expect(me.response.status).toBe(401);
    expect(me.error).toEqual({ ok: false, error: 'Unauthorized' });
    expect((await client.GET('/ping')).data).toMatchObject({ ok: true, pong: true });
  });

  it('a given fetch sends every request', async () => {
    const seen: string[] = [];
    const client = createGatewayClient({
      baseUrl: api.url,
      key: ADMIN_KEY,
      fetch: (request) => {
        seen.push(`${request.method} ${new URL(request.url).pathname} ${request.headers.get('authorization')}`);
        return fetch(request);
      },
    });
    expect((await client.GET('/me')).data?.role).toBe('admin');
    expect(seen).toEqual([`GET /me Bearer ${ADMIN_KEY}`]);
  });
});
