import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { webhookKey } from '../../../core/keys.js';
import { listWebhooks } from '../../../core/store/webhooks.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';

/** Webhook registrations through the HTTP API: ids, scope, filter, secret, access keys. */
const ADMIN = 'admin-key-0123456789abcdef';
const admin = { authorization: `Bearer ${ADMIN}` };
const SECRET = 'whsec-0123456789abcdef';
/** The AWS targets this API allows: one account's `orders-*` queues anywhere, one bus. */
const EVENT_TARGET_ARNS = 'arn:aws:sqs:*:123456789012:orders-*,arn:aws:events:eu-west-1:123456789012:event-bus/gateway';

let api: TestApi;
let table: Table;
let stopStack: (() => Promise<void>) | undefined;
let counter = 0;
const unique = () => `${Date.now().toString(36)}${counter++}`;
const hookUrl = () => `https://hooks.example.com/${unique()}`;

beforeAll(async () => {
  const started = await startApiStack({ overrides: { API_KEY: ADMIN, EVENT_TARGET_ARNS } });
  ({ api, stop: stopStack } = started);
  table = tableOf(started.stack.config, started.stack.clients);
});
afterAll(async () => {
  await stopStack?.();
});

async function newAccount() {
  const id = `wh${unique()}`;
  expect((await api.call('POST', '/accounts', { id }, admin)).status).toBe(201);
  return id;
}

async function accountKey(accountId: string) {
  const created = await api.call('POST', `/accounts/${accountId}/keys`, {}, admin);
  expect(created.status).toBe(201);
  return { authorization: `Bearer ${String(created.body.secret)}` };
}

type Webhook = { webhookId: string; url: string; events: string[]; accountId?: string; createdAt: string };
const webhooksOf = (body: Record<string, unknown>) => body.webhooks as Webhook[];

describe('POST /webhooks', () => {
  it('answers the spec fields plus the registration; the same URL again is 200 with the same id', async () => {
    const url = hookUrl();
    const first = await api.call('POST', '/webhooks', { url }, admin);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      ok: true,
      url,
      created: true,
      webhook: { webhookId: expect.stringMatching(/^wh_[A-Za-z0-9_-]{22}$/), url, events: ['message'], createdAt: expect.any(String) },
    });
    const again = await api.call('POST', '/webhooks', { url }, admin);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, created: false });
  });

  it('concurrent registrations of one URL: one 201, the others 200, one id, one stored item', async () => {
    const url = hookUrl();
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.call('POST', '/webhooks', { url }, admin)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => (a.body.webhook as Webhook).webhookId)).size).toBe(1);
    expect((await listWebhooks(table)).filter((w) => w.url === url)).toHaveLength(1);
  });

  it('a re-registration replaces events and secret with those given; omitted ones keep their value', async () => {
    const url = hookUrl();
    const first = await api.call('POST', '/webhooks', { url, events: ['message', 'qr'], secret: SECRET }, admin);
    expect(first.body.webhook).toMatchObject({ events: ['message', 'qr'] });
    const stored = async () => (await listWebhooks(table)).find((w) => w.url === url && w.accountId === undefined);

    const replaced = await api.call('POST', '/webhooks', { url, events: ['session.status'] }, admin);
    expect(replaced.status).toBe(200);
    expect(replaced.body.webhook).toEqual({ ...(first.body.webhook as Webhook), events: ['session.status'] });
    expect(await stored()).toMatchObject({ events: ['session.status'], secret: SECRET });

    const newSecret = `${SECRET}-rotated`;
    await api.call('POST', '/webhooks', { url, secret: newSecret }, admin);
    expect(await stored()).toMatchObject({ events: ['session.status'], secret: newSecret });

    await api.call('POST', '/webhooks', { url, secret: null }, admin);
    expect((await stored())?.secret).toBeUndefined();
  });

  it('the secret is never answered, by a registration or a list', async () => {
    const url = hookUrl();
    const registered = await api.call('POST', '/webhooks', { url, secret: SECRET }, admin);
    expect(JSON.stringify(registered.body)).not.toContain(SECRET);
    const listed = await api.call('GET', '/webhooks', undefined, admin);
    expect(webhooksOf(listed.body).some((w) => w.url === url)).toBe(true);
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);
  });

  it('events: names or ["*"]; duplicates collapse; an unknown name, an empty list or a non-list is 400', async () => {
    const all = await api.call('POST', '/webhooks', { url: hookUrl(), events: ['*'] }, admin);
    expect(all.body.webhook).toMatchObject({ events: ['*'] });
    const twice = await api.call('POST', '/webhooks', { url: hookUrl(), events: ['qr', 'qr', 'message.status'] }, admin);
    expect(twice.body.webhook).toMatchObject({ events: ['qr', 'message.status'] });

    const url = hookUrl();
    expect(await api.call('POST', '/webhooks', { url, events: ['message', 'message.sent'] }, admin)).toMatchObject({
      status: 400,
      body: { ok: false, error: 'unknown event: message.sent' },
    });
    const notAList = { ok: false, error: 'events must be a non-empty list of event names, or ["*"]' };
    for (const events of [[], 'message', [1]]) {
      expect(await api.call('POST', '/webhooks', { url, events }, admin)).toMatchObject({ status: 400, body: notAList });
    }
    expect((await listWebhooks(table)).some((w) => w.url === url)).toBe(false);
  });

  it('secret: 16 to 256 characters, else 400', async () => {
    const error = 'secret must be a string of 16 to 256 characters, or null to remove it';
    for (const secret of ['short', 'x'.repeat(257), 42]) {
      expect(await api.call('POST', '/webhooks', { url: hookUrl(), secret }, admin)).toEqual(
        expect.objectContaining({ status: 400, body: { ok: false, error } }),
      );
    }
    expect((await api.call('POST', '/webhooks', { url: hookUrl(), secret: 'x'.repeat(256) }, admin)).status).toBe(201);
  });

  it('a URL longer than 900 bytes is 400 (it is part of a DynamoDB key); 900 bytes is accepted', async () => {
    const base = `https://hooks.example.com/${unique()}/`;
    const longest = base + 'a'.repeat(900 - base.length);
    expect((await api.call('POST', '/webhooks', { url: `${longest}a` }, admin)).body).toEqual({
      ok: false,
      error: 'url must be a valid http or https URL',
    });
    expect((await api.call('POST', `/accounts/${await newAccount()}/webhooks`, { url: longest }, admin)).status).toBe(201);
  });

  it('the target check applies: a metadata address is refused', async () => {
    expect(await api.call('POST', '/webhooks', { url: 'http://169.254.169.254/latest' }, admin)).toMatchObject({
      status: 400,
      body: { ok: false, error: 'url targets a forbidden address' },
    });
  });

  it('a registration stored before ids and filters existed reads as a global message webhook and re-registers in place', async () => {
    const url = hookUrl();
    await table.doc.send(
      new PutCommand({ TableName: table.name, Item: { ...webhookKey(url), url, createdAt: '2025-01-01T00:00:00.000Z' } }),
    );
    const listed = webhooksOf((await api.call('GET', '/webhooks', undefined, admin)).body).find((w) => w.url === url);
    expect(listed).toEqual({ webhookId: expect.stringMatching(/^wh_/), url, events: ['message'], createdAt: '2025-01-01T00:00:00.000Z' });
    const again = await api.call('POST', '/webhooks', { url }, admin);
    expect(again).toMatchObject({ status: 200, body: { created: false, webhook: { ...listed } } });
  });
});

describe('AWS targets: SQS queue and EventBridge bus ARNs', () => {
  const queueArn = () => `arn:aws:sqs:eu-west-1:123456789012:orders-${unique()}`;
  const notAllowed = { status: 400, body: { ok: false, error: 'target not allowed' } };
  const malformed = {
    status: 400,
    body: {
      ok: false,
      error:
        'url must be an SQS queue ARN (arn:aws:sqs:<region>:<account>:<queue>) or an EventBridge event bus ARN (arn:aws:events:<region>:<account>:event-bus/<name>)',
    },
  };

  it('an allowed queue or bus is registered like a URL, globally and for an account', async () => {
    const queue = queueArn();
    const global = await api.call('POST', '/webhooks', { url: queue, events: ['*'] }, admin);
    expect(global).toMatchObject({ status: 201, body: { ok: true, url: queue, created: true, webhook: { url: queue, events: ['*'] } } });
    expect((await api.call('POST', '/webhooks', { url: queue }, admin)).body).toMatchObject({ created: false });

    const id = await newAccount();
    const fifo = `arn:aws:sqs:us-east-2:123456789012:orders-${unique()}.fifo`;
    const bus = 'arn:aws:events:eu-west-1:123456789012:event-bus/gateway';
    for (const url of [fifo, bus]) {
      expect(await api.call('POST', `/accounts/${id}/webhooks`, { url }, admin)).toMatchObject({
        status: 201,
        body: { webhook: { url, accountId: id } },
      });
    }
    expect(webhooksOf((await api.call('GET', `/accounts/${id}/webhooks`, undefined, admin)).body).map((w) => w.url)).toEqual([fifo, bus]);
  });

  it('an ARN outside EVENT_TARGET_ARNS: 400 target not allowed on both routes, nothing stored', async () => {
    const id = await newAccount();
    const outside = [
      'arn:aws:sqs:eu-west-1:123456789012:invoices',
      'arn:aws:sqs:eu-west-1:210987654321:orders-eu',
      'arn:aws:events:eu-west-2:123456789012:event-bus/gateway',
      'arn:aws:events:eu-west-1:123456789012:event-bus/gateway-2',
      'arn:aws-cn:sqs:cn-north-1:123456789012:orders-cn',
    ];
    for (const url of outside) {
      expect(await api.call('POST', '/webhooks', { url }, admin), url).toMatchObject(notAllowed);
      expect(await api.call('POST', `/accounts/${id}/webhooks`, { url }, admin), url).toMatchObject(notAllowed);
    }
    expect((await listWebhooks(table)).some((w) => outside.includes(w.url))).toBe(false);
  });

  it('a malformed ARN: 400 naming url, on both routes', async () => {
    const id = await newAccount();
    for (const url of [
      'arn:aws:sqs:eu-west-1:123456789012',
      'arn:aws:sqs:eu-west-1:1234:orders-x',
      'arn:aws:sqs:eu-west-1:123456789012:orders-a.b',
      'arn:aws:sqs:EU:123456789012:orders-x',
      'arn:aws:events:eu-west-1:123456789012:rule/gateway',
      'arn:aws:sns:eu-west-1:123456789012:orders-x',
      'arn:aws:sqs:eu-west-1:123456789012:orders-*',
    ]) {
      expect(await api.call('POST', '/webhooks', { url }, admin), url).toMatchObject(malformed);
      expect(await api.call('POST', `/accounts/${id}/webhooks`, { url }, admin), url).toMatchObject(malformed);
    }
  });

  it('a secret with an AWS target: 400 (it signs http(s) deliveries only)', async () => {
    expect(await api.call('POST', '/webhooks', { url: queueArn(), secret: SECRET }, admin)).toMatchObject({
      status: 400,
      body: { ok: false, error: 'secret signs http(s) deliveries only: an AWS target takes none' },
    });
  });
});

describe('scoped webhooks', () => {
  it('the same URL is one registration per scope: global and each account have their own id', async () => {
    const [a, b] = [await newAccount(), await newAccount()];
    const url = hookUrl();
    const global = await api.call('POST', '/webhooks', { url }, admin);
    const forA = await api.call('POST', `/accounts/${a}/webhooks`, { url, events: ['message.status'] }, admin);
    const forB = await api.call('POST', `/accounts/${b}/webhooks`, { url }, admin);
    expect([global.status, forA.status, forB.status]).toEqual([201, 201, 201]);
    const ids = [global, forA, forB].map((r) => (r.body.webhook as Webhook).webhookId);
    expect(new Set(ids).size).toBe(3);
    expect(forA.body).toEqual({
      ok: true,
      url,
      created: true,
      webhook: { webhookId: ids[1], url, events: ['message.status'], accountId: a, createdAt: expect.any(String) },
    });
    expect((await api.call('POST', `/accounts/${a}/webhooks`, { url }, admin)).body).toMatchObject({
      created: false,
      webhook: { webhookId: ids[1], events: ['message.status'] },
    });

    const ofA = webhooksOf((await api.call('GET', `/accounts/${a}/webhooks`, undefined, admin)).body);
    expect(ofA.map((w) => w.webhookId)).toEqual([ids[1]]);
    const all = webhooksOf((await api.call('GET', '/webhooks', undefined, admin)).body);
    expect(all.filter((w) => w.url === url).map((w) => [w.webhookId, w.accountId])).toEqual(
      expect.arrayContaining([
        [ids[0], undefined],
        [ids[1], a],
        [ids[2], b],
      ]),
    );
  });

  it('an unknown account: 404 Account not found, as on the other account routes', async () => {
    const notFound = { status: 404, body: { ok: false, error: 'Account not found' } };
    expect(await api.call('POST', '/accounts/nosuchaccount/webhooks', { url: hookUrl() }, admin)).toMatchObject(notFound);
    expect(await api.call('GET', '/accounts/nosuchaccount/webhooks', undefined, admin)).toMatchObject(notFound);
    expect(await api.call('GET', '/accounts/no-such!/webhooks', undefined, admin)).toMatchObject(notFound);
  });

  it('deleting the account deletes its scoped webhooks, not the global ones', async () => {
    const id = await newAccount();
    const url = hookUrl();
    await api.call('POST', '/webhooks', { url }, admin);
    await api.call('POST', `/accounts/${id}/webhooks`, { url }, admin);
    await api.call('POST', `/accounts/${id}/webhooks`, { url: hookUrl() }, admin);
    expect(await listWebhooks(table).then((all) => all.filter((w) => w.accountId === id))).toHaveLength(2);

    expect((await api.call('DELETE', `/accounts/${id}`, undefined, admin)).status).toBe(200);
    const left = await listWebhooks(table);
    expect(left.filter((w) => w.accountId === id)).toEqual([]);
    expect(left.some((w) => w.url === url && w.accountId === undefined)).toBe(true);
  });
});

describe('DELETE /webhooks/:webhookId', () => {
  it('deletes the one registration; again, or an unknown or malformed id: 404 Webhook not found', async () => {
    const id = await newAccount();
    const url = hookUrl();
    const global = (await api.call('POST', '/webhooks', { url }, admin)).body.webhook as Webhook;
    const scoped = (await api.call('POST', `/accounts/${id}/webhooks`, { url }, admin)).body.webhook as Webhook;

    expect(await api.call('DELETE', `/webhooks/${scoped.webhookId}`, undefined, admin)).toMatchObject({
      status: 200,
      body: { ok: true, message: 'Webhook deleted' },
    });
    const left = await listWebhooks(table);
    expect(left.some((w) => w.webhookId === scoped.webhookId)).toBe(false);
    expect(left.some((w) => w.webhookId === global.webhookId)).toBe(true);

    const notFound = { status: 404, body: { ok: false, error: 'Webhook not found' } };
    expect(await api.call('DELETE', `/webhooks/${scoped.webhookId}`, undefined, admin)).toMatchObject(notFound);
    expect(await api.call('DELETE', `/webhooks/wh_${'A'.repeat(22)}`, undefined, admin)).toMatchObject(notFound);
    expect(await api.call('DELETE', '/webhooks/nope', undefined, admin)).toMatchObject(notFound);
  });
});

describe('access keys', () => {
  it("an account key manages its account's webhooks and nothing else", async () => {
    const [mine, other] = [await newAccount(), await newAccount()];
    const key = await accountKey(mine);
    const url = hookUrl();

    const created = await api.call('POST', `/accounts/${mine}/webhooks`, { url, secret: SECRET }, key);
    expect(created.status).toBe(201);
    const webhookId = (created.body.webhook as Webhook).webhookId;
    expect(webhooksOf((await api.call('GET', `/accounts/${mine}/webhooks`, undefined, key)).body).map((w) => w.webhookId)).toEqual([
      webhookId,
    ]);

    const forbidden = { status: 403, body: { ok: false, error: 'Forbidden' } };
    expect(await api.call('POST', '/webhooks', { url }, key)).toMatchObject(forbidden);
    expect(await api.call('GET', '/webhooks', undefined, key)).toMatchObject(forbidden);
    expect(await api.call('DELETE', `/webhooks/${webhookId}`, undefined, key)).toMatchObject(forbidden);
    expect(await api.call('POST', `/webhooks/${webhookId}/replay`, { since: 0 }, key)).toMatchObject(forbidden);
    expect(await api.call('POST', `/accounts/${other}/webhooks`, { url }, key)).toMatchObject(forbidden);
    expect(await api.call('GET', `/accounts/${other}/webhooks`, undefined, key)).toMatchObject(forbidden);

    // Another scope's webhook is not found under this account's path.
    const othersHook = (await api.call('POST', `/accounts/${other}/webhooks`, { url }, admin)).body.webhook as Webhook;
    const globalHook = (await api.call('POST', '/webhooks', { url }, admin)).body.webhook as Webhook;
    for (const foreign of [othersHook.webhookId, globalHook.webhookId]) {
      expect(await api.call('DELETE', `/accounts/${mine}/webhooks/${foreign}`, undefined, key)).toMatchObject({
        status: 404,
        body: { error: 'Webhook not found' },
      });
    }
    expect((await listWebhooks(table)).filter((w) => [othersHook.webhookId, globalHook.webhookId].includes(w.webhookId))).toHaveLength(2);

    expect(await api.call('DELETE', `/accounts/${mine}/webhooks/${webhookId}`, undefined, key)).toMatchObject({
      status: 200,
      body: { ok: true, message: 'Webhook deleted' },
    });
    expect(webhooksOf((await api.call('GET', `/accounts/${mine}/webhooks`, undefined, key)).body)).toEqual([]);
  });
});

describe('/openapi.json', () => {
  it('lists the webhook routes', async () => {
    const { body } = await api.call('GET', '/openapi.json');
    const paths = body.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/webhooks'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/webhooks/{webhookId}'] ?? {})).toEqual(['delete']);
    expect(Object.keys(paths['/webhooks/{webhookId}/replay'] ?? {})).toEqual(['post']);
    expect(Object.keys(paths['/accounts/{accountId}/webhooks'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/accounts/{accountId}/webhooks/{webhookId}'] ?? {})).toEqual(['delete']);
    expect(Object.keys(paths['/accounts/{accountId}/webhooks/{webhookId}/replay'] ?? {})).toEqual(['post']);
  });
});
