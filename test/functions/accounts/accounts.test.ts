import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listKeys, mediaStoreOf, putStream } from '../../../core/media-store.js';
import { readCreds, writeCreds } from '../../../core/store/auth-state.js';
import { updateAccountStatus } from '../../../core/store/accounts.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf } from '../../../core/store/table.js';
import type { FakeConnector } from '../../support/fake-connector.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';
import type { TestStack } from '../../support/test-stack.js';

let stack: TestStack;
let api: TestApi;
let connector: FakeConnector;
let stopStack: (() => Promise<void>) | undefined;
let counter = 0;
const newId = () => `acct${Date.now().toString(36)}${counter++}`;

beforeAll(async () => {
  ({ stack, api, connector, stop: stopStack } = await startApiStack());
});
afterAll(async () => {
  await stopStack?.();
});

describe('health and unknown routes', () => {
  it('GET /ping: 200 {ok, pong, time}', async () => {
    const { status, body } = await api.call('GET', '/ping');
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, pong: true });
    expect(new Date(String(body.time)).toISOString()).toBe(body.time);
  });

  it('unknown route: 404 JSON with ok false', async () => {
    const { status, body } = await api.call('GET', '/nope');
    expect(status).toBe(404);
    expect(body).toEqual({ ok: false, error: 'Not found' });
  });

  it('every response carries a request id header', async () => {
    const { headers } = await api.call('GET', '/ping');
    expect(headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('POST /accounts', () => {
  it('creates: 201 with the create form, stores connecting, enqueues connect', async () => {
    const id = newId();
    const { status, body } = await api.call('POST', '/accounts', { id, name: 'Sales' });
    expect(status).toBe(201);
    const account = body.account as Record<string, unknown>;
    expect(body.ok).toBe(true);
    expect(Object.keys(account).sort()).toEqual(['_id', 'collectionName', 'createdAt', 'name', 'status']);
    expect(account).toMatchObject({ _id: id, name: 'Sales', collectionName: `auth_${id}`, status: 'connecting' });
    expect(String(account.createdAt)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await connector.waitFor((c) => c.type === 'connect' && c.accountId === id);
  });

  it('omits name when not given and keeps a given collectionName', async () => {
    const id = newId();
    const { body } = await api.call('POST', '/accounts', { id, collectionName: 'custom_auth' });
    expect(body.account).not.toHaveProperty('name');
    expect(body.account).toMatchObject({ collectionName: 'custom_auth' });
  });

  it('without id: 400 id is required', async () => {
    expect(await api.call('POST', '/accounts', { name: 'x' })).toMatchObject({
      status: 400,
      body: { ok: false, error: 'id is required' },
    });
    expect((await api.call('POST', '/accounts', { id: '' })).body.error).toBe('id is required');
  });

  it('with a used id: 400 Account already exists', async () => {
    const id = newId();
    await api.call('POST', '/accounts', { id });
    expect(await api.call('POST', '/accounts', { id })).toMatchObject({
      status: 400,
      body: { ok: false, error: 'Account already exists' },
    });
  });

  it('with an id that is not alphanumeric or a bad collectionName: 400', async () => {
    for (const id of ['has space', 'a/b', 'dash-id', 'x'.repeat(65)]) {
      const { status, body } = await api.call('POST', '/accounts', { id });
      expect(status).toBe(400);
      expect(body.error).toMatch(/letters or digits/);
    }
    const { status } = await api.call('POST', '/accounts', { id: newId(), collectionName: '../etc' });
    expect(status).toBe(400);
  });

  it('malformed JSON: 400 Invalid JSON body; a non-JSON content type: 400', async () => {
    expect(await api.call('POST', '/accounts', '{"id":', { 'content-type': 'application/json' })).toMatchObject({
      status: 400,
      body: { ok: false, error: 'Invalid JSON body' },
    });
    const asText = await api.call('POST', '/accounts', 'id=abc', { 'content-type': 'text/plain' });
    expect(asText.status).toBe(400);
    expect(asText.body.ok).toBe(false);
  });

  it('a body that is not an object: 400', async () => {
    const { status, body } = await api.call('POST', '/accounts', '[1,2]', { 'content-type': 'application/json' });
    expect(status).toBe(400);
    expect(body.ok).toBe(false);
  });
});

describe('GET /accounts and /accounts/:id', () => {
  it('lists accounts with currentStatus and hasQR', async () => {
    const id = newId();
    await api.call('POST', '/accounts', { id, name: 'Listed' });
    const { status, body } = await api.call('GET', '/accounts');
    expect(status).toBe(200);
    const accounts = body.accounts as Array<Record<string, unknown>>;
    expect(accounts.find((a) => a._id === id)).toMatchObject({
      _id: id,
      name: 'Listed',
      status: 'connecting',
      currentStatus: 'connecting',
      hasQR: false,
    });
  });

  it('gets one account; unknown: 404 Account not found', async () => {
    const id = newId();
    await api.call('POST', '/accounts', { id });
    expect(await api.call('GET', `/accounts/${id}`)).toMatchObject({
      status: 200,
      body: { ok: true, account: { _id: id, currentStatus: 'connecting', hasQR: false } },
    });
    expect(await api.call('GET', `/accounts/${newId()}`)).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Account not found' },
    });
    expect((await api.call('GET', '/accounts/bad%20id')).status).toBe(404);
  });

  it('lastDisconnect: absent until the connector records one, then {reason, at} in get and list, and in /openapi.json', async () => {
    const id = newId();
    await api.call('POST', '/accounts', { id });
    expect((await api.call('GET', `/accounts/${id}`)).body.account).not.toHaveProperty('lastDisconnect');
    const table = tableOf(stack.config, stack.clients);
    await updateAccountStatus(table, id, { status: 'logged_out', lastDisconnect: { reason: 'removed_by_whatsapp', at: 1767268800000 } });
    const expected = { reason: 'removed_by_whatsapp', at: 1767268800000 };
    expect((await api.call('GET', `/accounts/${id}`)).body.account).toMatchObject({ status: 'logged_out', lastDisconnect: expected });
    const listed = (await api.call('GET', '/accounts')).body.accounts as Array<Record<string, unknown>>;
    expect(listed.find((a) => a._id === id)?.lastDisconnect).toEqual(expected);
    // A status change that is no disconnect keeps the last one.
    await updateAccountStatus(table, id, { status: 'connecting' });
    expect((await api.call('GET', `/accounts/${id}`)).body.account).toMatchObject({ status: 'connecting', lastDisconnect: expected });

    const spec = (await api.call('GET', '/openapi.json')).body as {
      components: { schemas: { Account: { properties: Record<string, { properties?: Record<string, { enum?: string[] }> }> } } };
    };
    const lastDisconnect = spec.components.schemas.Account.properties.lastDisconnect;
    expect(Object.keys(lastDisconnect?.properties ?? {})).toEqual(['reason', 'at']);
    expect(lastDisconnect?.properties?.reason?.enum).toEqual([
      'connected',
      'qr_timeout',
      'logged_out',
      'removed_by_whatsapp',
      'replaced',
      'connection_lost',
      'restart_required',
      'stopped',
      'client_too_old',
      'proxy_auth_failed',
      'proxy_forbidden',
      'proxy_failed',
    ]);
  });
});

describe('connection control', () => {
  it('status: 200 {ok, status, accountId, lastUpdate}', async () => {
    const id = newId();
    await api.call('POST', '/accounts', { id });
    const { status, body } = await api.call('GET', `/accounts/${id}/status`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, status: 'connecting', accountId: id });
    expect(String(body.lastUpdate)).toMatch(/Z$/);
  });

  it('connect: 200 connecting and a connect command; disconnect: 200 and a disconnect command', async () => {
    const id = newId();
    await api.call('POST', '/accounts', { id });
    const connect = await api.call('POST', `/accounts/${id}/connect`);
    expect(connect.status).toBe(200);
    expect(connect.body).toMatchObject({ ok: true, status: 'connecting' });
    expect(typeof connect.body.message).toBe('string');
    const disconnect = await api.call('POST', `/accounts/${id}/disconnect`);
    expect(disconnect.status).toBe(200);
    expect(disconnect.body.ok).toBe(true);
    expect(typeof disconnect.body.message).toBe('string');
    await connector.waitFor((c) => c.type === 'disconnect' && c.accountId === id);
    expect(connector.commands.filter((c) => c.type === 'connect' && c.accountId === id)).toHaveLength(2);
  });

  it('unknown account on status, connect, disconnect, delete, chats, messages, sends: 404 Account not found', async () => {
    const id = newId();
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/accounts/${id}/status`],
      ['POST', `/accounts/${id}/connect`],
      ['POST', `/accounts/${id}/disconnect`],
      ['DELETE', `/accounts/${id}`],
      ['GET', `/accounts/${id}/chats`],
      ['GET', `/accounts/${id}/chats/15551234567@s.whatsapp.net/messages`],
      ['GET', `/accounts/${id}/messages/ABC`],
      ['GET', `/accounts/${id}/messages/ABC/media`],
      ['POST', `/accounts/${id}/message/send`, { to: '15551234567@s.whatsapp.net', message: 'hi' }],
      ['POST', `/accounts/${id}/message/reply`, { to: '15551234567@s.whatsapp.net', message: 'hi', quotedMessageId: 'A1' }],
      ['POST', `/accounts/${id}/message/react`, { to: '15551234567@s.whatsapp.net', messageId: 'A1', emoji: '👍' }],
      ['POST', `/accounts/${id}/message/delete`, { to: '15551234567@s.whatsapp.net', messageId: 'A1' }],
    ];
    for (const [method, path, body] of calls) {
      const result = await api.call(method, path, body);
      expect({ path, ...result.body, status: result.status }).toEqual({
        path,
        ok: false,
        error: 'Account not found',
        status: 404,
      });
    }
  });
});

describe('DELETE /accounts/:id', () => {
  it('removes the account, its messages, auth state and media objects, and enqueues delete_account', async () => {
    const id = newId();
    await api.call('POST', '/accounts', { id });
    const table = tableOf(stack.config, stack.clients);
    const media = mediaStoreOf(stack.config, stack.clients);
    await putMessage(table, id, {
      messageId: 'DEL1',
      from: '15551234567@s.whatsapp.net',
      chatId: '15551234567@s.whatsapp.net',
      timestamp: 1,
      type: 'text',
      fromMe: false,
      text: 'x',
    });
    await writeCreds(table, `auth_${id}`, '{}');
    await putStream(media, `accounts/${id}/media/m1`, Buffer.from('x'), { contentType: 'image/png' });

    const { status, body } = await api.call('DELETE', `/accounts/${id}`);
    expect(status).toBe(200);
    expect(body.ok).toBe(true);
    expect(typeof body.message).toBe('string');

    expect((await api.call('GET', `/accounts/${id}`)).status).toBe(404);
    expect(await readCreds(table, `auth_${id}`)).toBeUndefined();
    expect(await listKeys(media, `accounts/${id}/`)).toEqual([]);
    const command = await connector.waitFor((c) => c.type === 'delete_account' && c.accountId === id);
    expect(command.payload).toEqual({ collectionName: `auth_${id}` });
    expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  });
});

describe('collectionName belongs to one account', () => {
  const table = () => tableOf(stack.config, stack.clients);

  it("another account's default collection: 409 collectionName already in use, and its session is untouched", async () => {
    const owner = newId();
    const intruder = newId();
    expect((await api.call('POST', '/accounts', { id: owner })).status).toBe(201);
    await writeCreds(table(), `auth_${owner}`, '{"me":"owner"}');

    expect(await api.call('POST', '/accounts', { id: intruder, collectionName: `auth_${owner}` })).toEqual(
      expect.objectContaining({ status: 409, body: { ok: false, error: 'collectionName already in use' } }),
    );
    expect((await api.call('GET', `/accounts/${intruder}`)).status).toBe(404);
    expect((await api.call('DELETE', `/accounts/${intruder}`)).status).toBe(404);
    expect(await readCreds(table(), `auth_${owner}`)).toBe('{"me":"owner"}');
    expect(connector.commands.some((c) => c.accountId === intruder)).toBe(false);
  });

  it('a default name someone else holds: creating the account it would default to is refused', async () => {
    const later = newId();
    const holder = newId();
    expect((await api.call('POST', '/accounts', { id: holder, collectionName: `auth_${later}` })).status).toBe(201);
    expect(await api.call('POST', '/accounts', { id: later })).toMatchObject({
      status: 409,
      body: { ok: false, error: 'collectionName already in use' },
    });
    expect((await api.call('POST', '/accounts', { id: later, collectionName: `own_${later}` })).status).toBe(201);
  });

  it('a custom name is held by its account until the account is deleted, then free again', async () => {
    const collectionName = `shared_${newId()}`;
    const first = newId();
    const second = newId();
    expect((await api.call('POST', '/accounts', { id: first, collectionName })).status).toBe(201);
    expect((await api.call('POST', '/accounts', { id: second, collectionName })).status).toBe(409);
    expect((await api.call('DELETE', `/accounts/${first}`)).status).toBe(200);
    expect((await api.call('POST', '/accounts', { id: second, collectionName })).status).toBe(201);
  });

  it('deleting an account removes only its own session', async () => {
    const owner = newId();
    const other = newId();
    await api.call('POST', '/accounts', { id: owner });
    await api.call('POST', '/accounts', { id: other });
    await writeCreds(table(), `auth_${owner}`, '{"me":"owner"}');
    await writeCreds(table(), `auth_${other}`, '{"me":"other"}');
    expect((await api.call('DELETE', `/accounts/${other}`)).status).toBe(200);
    expect(await readCreds(table(), `auth_${other}`)).toBeUndefined();
    expect(await readCreds(table(), `auth_${owner}`)).toBe('{"me":"owner"}');
  });

  it('concurrent creates naming one collection: exactly one wins, the others get 409 and leave no account', async () => {
    const collectionName = `race_${newId()}`;
    const ids = Array.from({ length: 6 }, () => newId());
    const results = await Promise.all(ids.map((id) => api.call('POST', '/accounts', { id, collectionName })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    const winner = ids[results.findIndex((r) => r.status === 201)];
    const { body } = await api.call('GET', '/accounts');
    const holders = (body.accounts as { _id: string; collectionName: string }[]).filter((a) => a.collectionName === collectionName);
    expect(holders.map((a) => a._id)).toEqual([winner]);
  });

  it('the same id twice at once: one 201, one 400 Account already exists, and the winner keeps its collection', async () => {
    const id = newId();
    const results = await Promise.all([api.call('POST', '/accounts', { id }), api.call('POST', '/accounts', { id })]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
    expect((await api.call('POST', '/accounts', { id: newId(), collectionName: `auth_${id}` })).status).toBe(409);
  });
});

describe('POST /webhooks', () => {
  it('new URL: 201 created true; same URL again: 200 created false', async () => {
    const url = `https://hooks.example.com/${newId()}`;
    expect(await api.call('POST', '/webhooks', { url })).toMatchObject({
      status: 201,
      body: { ok: true, url, created: true },
    });
    expect(await api.call('POST', '/webhooks', { url })).toMatchObject({
      status: 200,
      body: { ok: true, url, created: false },
    });
  });

  it('missing or non-http URL: 400 url must be a valid http or https URL', async () => {
    for (const body of [{}, { url: 'ftp://x.example.com' }, { url: 'not a url' }, { url: 42 }]) {
      expect(await api.call('POST', '/webhooks', body)).toMatchObject({
        status: 400,
        body: { ok: false, error: 'url must be a valid http or https URL' },
      });
    }
  });
});
