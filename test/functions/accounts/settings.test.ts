import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findAccount } from '../../../core/store/accounts.js';
import { tableOf } from '../../../core/store/table.js';
import type { FakeConnector } from '../../support/fake-connector.js';
import { logSink } from '../../support/log-sink.js';
import { startApiStack, startTestApi, type TestApi } from '../../support/test-api.js';
import type { TestStack } from '../../support/test-stack.js';

/** Account settings through the HTTP API (docs/api.md, docs/sending.md): defaults, validation field by field, deep merge, masking. */
let stack: TestStack;
let api: TestApi;
let connector: FakeConnector;
let stopStack: (() => Promise<void>) | undefined;
const apiLog = logSink('debug');
let counter = 0;
const newId = () => `set${Date.now().toString(36)}${counter++}`;

const DEFAULTS = {
  sendPolicy: {
    enabled: true,
    perMinute: 20,
    perHour: 300,
    perDay: 1500,
    newChatsPerDay: 50,
    gapMs: { min: 2000, max: 6000 },
    typing: true,
    warmup: true,
    queueLimit: 1000,
  },
  proxy: null,
  rejectCalls: false,
  ignoreGroups: false,
  history: 'recent',
};

beforeAll(async () => {
  // The deployment default (pacing on); the test stack turns it off for other suites.
  ({ stack, connector, stop: stopStack } = await startApiStack({ overrides: { SEND_PACING_DEFAULT: 'on' } }));
  // The suite's API logs into memory, at debug, so that a test can look for a password in it.
  api = await startTestApi(stack, apiLog.logger);
});
afterAll(async () => {
  await api?.close();
  await stopStack?.();
});

async function newAccount(settings?: unknown): Promise<string> {
  const id = newId();
  const created = await api.call('POST', '/accounts', { id, ...(settings !== undefined ? { settings } : {}) });
  expect(created.status).toBe(201);
  return id;
}

const patch = (id: string, body: unknown) => api.call('PATCH', `/accounts/${id}/settings`, body);
const settingsOf = async (id: string) => (await api.call('GET', `/accounts/${id}/settings`)).body.settings as typeof DEFAULTS;

describe('GET /accounts/:accountId/settings', () => {
  it('a new account: every default of the table, no callRejectMessage, proxy null', async () => {
    const id = await newAccount();
    expect(await api.call('GET', `/accounts/${id}/settings`)).toMatchObject({ status: 200, body: { ok: true, settings: DEFAULTS } });
    expect(await settingsOf(id)).toEqual(DEFAULTS);
  });

  it('unknown account: 404 Account not found (and for an id that cannot exist)', async () => {
    expect(await api.call('GET', '/accounts/nosuchaccount/settings')).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Account not found' },
    });
    expect(await api.call('GET', '/accounts/no%20such/settings')).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Account not found' },
    });
  });

  it('SEND_PACING_DEFAULT=off: a new account starts with sendPolicy.enabled false, and a PATCH of another field keeps it', async () => {
    const unpaced = await startTestApi({ ...stack, config: { ...stack.config, SEND_PACING_DEFAULT: 'off' } });
    try {
      const id = newId();
      expect((await unpaced.call('POST', '/accounts', { id })).status).toBe(201);
      expect((await unpaced.call('GET', `/accounts/${id}/settings`)).body.settings).toEqual({
        ...DEFAULTS,
        sendPolicy: { ...DEFAULTS.sendPolicy, enabled: false },
      });
      const changed = await unpaced.call('PATCH', `/accounts/${id}/settings`, { sendPolicy: { perMinute: 5 } });
      expect((changed.body.settings as typeof DEFAULTS).sendPolicy).toMatchObject({ enabled: false, perMinute: 5 });
      // What was stored is what counts, whatever the deployment's default later says.
      expect((await settingsOf(id)).sendPolicy).toMatchObject({ enabled: false, perMinute: 5 });
    } finally {
      await unpaced.close();
    }
  });

  it('an account stored before settings existed reads as the defaults', async () => {
    const id = await newAccount();
    const table = tableOf(stack.config, stack.clients);
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { accountKey } = await import('../../../core/keys.js');
    await table.doc.send(
      new UpdateCommand({ TableName: table.name, Key: accountKey(id), UpdateExpression: 'REMOVE settings, settingsVersion' }),
    );
    expect(await settingsOf(id)).toEqual(DEFAULTS);
    // Its first PATCH writes them whole.
    expect((await patch(id, { rejectCalls: true })).body.settings).toEqual({ ...DEFAULTS, rejectCalls: true });
    expect((await findAccount(table, id, true))?.settingsVersion).toBe(1);
  });
});

describe('PATCH /accounts/:accountId/settings', () => {
  it('merges deeply and answers the whole settings; GET shows the same', async () => {
    const id = await newAccount();
    const first = await patch(id, { sendPolicy: { perMinute: 6 } });
    expect(first).toMatchObject({
      status: 200,
      body: { ok: true, settings: { ...DEFAULTS, sendPolicy: { ...DEFAULTS.sendPolicy, perMinute: 6 } } },
    });
    const second = await patch(id, { sendPolicy: { gapMs: { max: 9000 } }, ignoreGroups: true, history: 'full' });
    const expected = {
      ...DEFAULTS,
      sendPolicy: { ...DEFAULTS.sendPolicy, perMinute: 6, gapMs: { min: 2000, max: 9000 } },
      ignoreGroups: true,
      history: 'full',
    };
    expect(second.body.settings).toEqual(expected);
    expect(await settingsOf(id)).toEqual(expected);
    // An empty patch changes nothing and answers the whole.
    expect((await patch(id, {})).body.settings).toEqual(expected);
  });

  it('PATCHes at the same time each keep their field: none is lost to another', async () => {
    const id = await newAccount();
    const patches = [
      { sendPolicy: { perMinute: 7 } },
      { sendPolicy: { perHour: 70 } },
      { sendPolicy: { gapMs: { max: 7000 } } },
      { rejectCalls: true },
      { ignoreGroups: true },
      { history: 'none' },
    ];
    const answers = await Promise.all(patches.map((body) => patch(id, body)));
    expect(answers.map((answer) => answer.status)).toEqual(patches.map(() => 200));
    expect(await settingsOf(id)).toEqual({
      ...DEFAULTS,
      sendPolicy: { ...DEFAULTS.sendPolicy, perMinute: 7, perHour: 70, gapMs: { min: 2000, max: 7000 } },
      rejectCalls: true,
      ignoreGroups: true,
      history: 'none',
    });
  });

  it('every field at the edges of its range is accepted', async () => {
    const id = await newAccount();
    const edges = {
      sendPolicy: {
        enabled: false,
        perMinute: 1,
        perHour: 100_000,
        perDay: 1,
        newChatsPerDay: 0,
        gapMs: { min: 0, max: 600_000 },
        typing: false,
        warmup: false,
        queueLimit: 100_000,
      },
      rejectCalls: true,
      callRejectMessage: 'x'.repeat(1000),
      ignoreGroups: true,
      history: 'none',
    };
    expect((await patch(id, edges)).body.settings).toEqual({ ...edges, proxy: null });
    expect((await patch(id, { sendPolicy: { gapMs: { min: 600_000 } } })).body.settings).toMatchObject({
      sendPolicy: { gapMs: { min: 600_000, max: 600_000 } },
    });
  });

  it('tells the connector (settings_changed), without the settings in the command', async () => {
    const id = await newAccount();
    expect((await patch(id, { proxy: { url: 'http://user:secret1@proxy.example.com:8080' } })).status).toBe(200);
    const command = await connector.waitFor((c) => c.type === 'settings_changed' && c.accountId === id);
    expect(command.payload).toEqual({});
  });

  it('callRejectMessage: set, then removed with null', async () => {
    const id = await newAccount();
    expect((await patch(id, { callRejectMessage: 'I cannot take calls' })).body.settings).toMatchObject({
      callRejectMessage: 'I cannot take calls',
    });
    const removed = await patch(id, { callRejectMessage: null });
    expect(removed.body.settings).toEqual(DEFAULTS);
    expect(Object.keys(removed.body.settings as object)).not.toContain('callRejectMessage');
  });

  const invalid: [string, unknown, string][] = [
    ['sendPolicy.enabled not a boolean', { sendPolicy: { enabled: 'yes' } }, 'sendPolicy.enabled must be true or false'],
    ['sendPolicy.perMinute 0', { sendPolicy: { perMinute: 0 } }, 'sendPolicy.perMinute must be an integer from 1 to 100000'],
    [
      'sendPolicy.perMinute above 100,000',
      { sendPolicy: { perMinute: 100_001 } },
      'sendPolicy.perMinute must be an integer from 1 to 100000',
    ],
    ['sendPolicy.perHour a fraction', { sendPolicy: { perHour: 1.5 } }, 'sendPolicy.perHour must be an integer from 1 to 100000'],
    ['sendPolicy.perDay a string', { sendPolicy: { perDay: '100' } }, 'sendPolicy.perDay must be an integer from 1 to 100000'],
    [
      'sendPolicy.newChatsPerDay negative',
      { sendPolicy: { newChatsPerDay: -1 } },
      'sendPolicy.newChatsPerDay must be an integer from 0 to 100000',
    ],
    ['sendPolicy.gapMs not an object', { sendPolicy: { gapMs: 5 } }, 'sendPolicy.gapMs must be an object'],
    ['sendPolicy.gapMs.min negative', { sendPolicy: { gapMs: { min: -1 } } }, 'sendPolicy.gapMs.min must be an integer from 0 to 600000'],
    [
      'sendPolicy.gapMs.max too long',
      { sendPolicy: { gapMs: { max: 600_001 } } },
      'sendPolicy.gapMs.max must be an integer from 0 to 600000',
    ],
    [
      'sendPolicy.gapMs min above max',
      { sendPolicy: { gapMs: { min: 5000, max: 4000 } } },
      'sendPolicy.gapMs.min must not be above sendPolicy.gapMs.max',
    ],
    [
      'sendPolicy.gapMs.min above the stored max',
      { sendPolicy: { gapMs: { min: 7000 } } },
      'sendPolicy.gapMs.min must not be above sendPolicy.gapMs.max',
    ],
    ['sendPolicy.typing not a boolean', { sendPolicy: { typing: 1 } }, 'sendPolicy.typing must be true or false'],
    ['sendPolicy.warmup null', { sendPolicy: { warmup: null } }, 'sendPolicy.warmup must be true or false'],
    ['sendPolicy.queueLimit 0', { sendPolicy: { queueLimit: 0 } }, 'sendPolicy.queueLimit must be an integer from 1 to 100000'],
    ['sendPolicy not an object', { sendPolicy: [] }, 'sendPolicy must be an object'],
    ['proxy a string', { proxy: 'http://proxy.example.com' }, 'proxy must be an object'],
    [
      'proxy without url',
      { proxy: {} },
      'proxy.url must be an http://, https:// or socks5:// URL (optional user:pass@, a host, an optional port)',
    ],
    [
      'proxy.url ftp',
      { proxy: { url: 'ftp://proxy.example.com' } },
      'proxy.url must be an http://, https:// or socks5:// URL (optional user:pass@, a host, an optional port)',
    ],
    [
      'proxy.url socks4',
      { proxy: { url: 'socks4://proxy.example.com:1080' } },
      'proxy.url must be an http://, https:// or socks5:// URL (optional user:pass@, a host, an optional port)',
    ],
    [
      'proxy.url with a path',
      { proxy: { url: 'http://proxy.example.com/x' } },
      'proxy.url must be an http://, https:// or socks5:// URL (optional user:pass@, a host, an optional port)',
    ],
    [
      'proxy.url not a URL',
      { proxy: { url: 'proxy.example.com:8080' } },
      'proxy.url must be an http://, https:// or socks5:// URL (optional user:pass@, a host, an optional port)',
    ],
    ['proxy.url on the metadata address', { proxy: { url: 'http://169.254.169.254' } }, 'proxy.url targets a forbidden address'],
    ['proxy.url on a link-local IPv6 address', { proxy: { url: 'socks5://u:p@[fe80::1]:1080' } }, 'proxy.url targets a forbidden address'],
    ['rejectCalls a string', { rejectCalls: 'true' }, 'rejectCalls must be true or false'],
    [
      'callRejectMessage empty',
      { callRejectMessage: '' },
      'callRejectMessage must be a text of 1 to 1000 characters, or null to remove it',
    ],
    [
      'callRejectMessage too long',
      { callRejectMessage: 'x'.repeat(1001) },
      'callRejectMessage must be a text of 1 to 1000 characters, or null to remove it',
    ],
    ['ignoreGroups a number', { ignoreGroups: 0 }, 'ignoreGroups must be true or false'],
    ['history unknown', { history: 'all' }, 'history must be none, recent or full'],
    ['an unknown field', { pace: true }, 'unknown setting: pace'],
    ['an unknown sendPolicy field', { sendPolicy: { perWeek: 5 } }, 'unknown setting: sendPolicy.perWeek'],
    ['an unknown gapMs field', { sendPolicy: { gapMs: { avg: 5 } } }, 'unknown setting: sendPolicy.gapMs.avg'],
    ['an unknown proxy field', { proxy: { url: 'http://proxy.example.com', type: 'http' } }, 'unknown setting: proxy.type'],
    ['a body that is not an object', [1], 'settings must be an object'],
  ];
  it.each(invalid)('%s: 400 naming the field, nothing changed', async (_what, body, error) => {
    const id = await newAccount();
    expect(await patch(id, body)).toMatchObject({ status: 400, body: { ok: false, error } });
    expect(await settingsOf(id)).toEqual(DEFAULTS);
  });

  it('a body that is not JSON: 400; no body at all changes nothing, like {}', async () => {
    const id = await newAccount();
    expect((await api.call('PATCH', `/accounts/${id}/settings`, 'not json')).status).toBe(400);
    expect(await api.call('PATCH', `/accounts/${id}/settings`)).toMatchObject({ status: 200, body: { ok: true, settings: DEFAULTS } });
  });

  it('unknown account: 404 Account not found, before the body is judged', async () => {
    expect(await patch('nosuchaccount', { sendPolicy: { perMinute: 6 } })).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Account not found' },
    });
    expect(await patch('nosuchaccount', { bogus: 1 })).toMatchObject({ status: 404, body: { ok: false, error: 'Account not found' } });
  });
});

describe('proxy', () => {
  it('http, https and socks5 with or without user:pass@: answered as given, the password as ***', async () => {
    const id = await newAccount();
    const table = tableOf(stack.config, stack.clients);
    const cases: [string, string][] = [
      ['http://proxy.example.com:8080', 'http://proxy.example.com:8080'],
      ['https://alice:s3cr%40t@proxy.example.com', 'https://alice:***@proxy.example.com'],
      ['socks5://bob:hunter2@127.0.0.1:1080', 'socks5://bob:***@127.0.0.1:1080'],
      ['socks5://carol@proxy.example.com:1080', 'socks5://carol@proxy.example.com:1080'],
    ];
    for (const [url, answered] of cases) {
      const changed = await patch(id, { proxy: { url } });
      expect(changed.body.settings).toMatchObject({ proxy: { url: answered } });
      expect(await settingsOf(id)).toMatchObject({ proxy: { url: answered } });
      // Stored as given: the connector needs the password.
      expect((await findAccount(table, id, true))?.settings?.proxy).toEqual({ url });
    }
  });

  it('sending back the masked URL keeps the stored password; another host takes the *** as given', async () => {
    const id = await newAccount();
    const table = tableOf(stack.config, stack.clients);
    await patch(id, { proxy: { url: 'http://dan:pa55@proxy.example.com:3128' } });
    const roundTrip = await patch(id, { ...(await settingsOf(id)), rejectCalls: true });
    expect(roundTrip.status).toBe(200);
    expect((await findAccount(table, id, true))?.settings?.proxy).toEqual({ url: 'http://dan:pa55@proxy.example.com:3128' });
    await patch(id, { proxy: { url: 'http://dan:***@other.example.com:3128' } });
    expect((await findAccount(table, id, true))?.settings?.proxy).toEqual({ url: 'http://dan:***@other.example.com:3128' });
  });

  it('null removes it', async () => {
    const id = await newAccount({ proxy: { url: 'http://proxy.example.com:8080' } });
    expect((await patch(id, { proxy: null })).body.settings).toEqual(DEFAULTS);
  });

  it('a private address is refused unless WEBHOOK_ALLOW_PRIVATE, like a webhook target', async () => {
    const strict = await startTestApi({ ...stack, config: { ...stack.config, WEBHOOK_ALLOW_PRIVATE: false } });
    try {
      const id = await newAccount();
      for (const url of ['http://10.1.2.3:3128', 'socks5://127.0.0.1:1080', 'http://localhost:3128']) {
        expect(await strict.call('PATCH', `/accounts/${id}/settings`, { proxy: { url } })).toMatchObject({
          status: 400,
          body: { ok: false, error: 'proxy.url targets a forbidden address' },
        });
      }
      expect((await api.call('PATCH', `/accounts/${id}/settings`, { proxy: { url: 'http://10.1.2.3:3128' } })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('the password is never in the log, at any level', async () => {
    const id = await newAccount({ proxy: { url: 'socks5://eve:n0tInTheLog@proxy.example.com:1080' } });
    await patch(id, { proxy: { url: 'http://eve:n0tInTheLogEither@169.254.169.254' } });
    await patch(id, { proxy: { url: 'http://eve:n0tInTheLogAtAll@proxy.example.com' } });
    await settingsOf(id);
    expect(apiLog.lines.some((line) => line.msg === 'account settings changed' && line.accountId === id)).toBe(true);
    expect(JSON.stringify(apiLog.lines)).not.toContain('n0tInTheLog');
  });
});

describe('POST /accounts with settings', () => {
  it('stores them over the defaults', async () => {
    const id = await newAccount({
      sendPolicy: { perDay: 500, gapMs: { min: 1000 } },
      rejectCalls: true,
      callRejectMessage: 'No calls, please',
    });
    expect(await settingsOf(id)).toEqual({
      ...DEFAULTS,
      sendPolicy: { ...DEFAULTS.sendPolicy, perDay: 500, gapMs: { min: 1000, max: 6000 } },
      rejectCalls: true,
      callRejectMessage: 'No calls, please',
    });
  });

  it('an invalid or unknown setting: 400 naming it, and no account', async () => {
    for (const [settings, error] of [
      [{ sendPolicy: { perMinute: 0 } }, 'sendPolicy.perMinute must be an integer from 1 to 100000'],
      [{ nope: 1 }, 'unknown setting: nope'],
      [{ sendPolicy: { gapMs: { min: 9000 } } }, 'sendPolicy.gapMs.min must not be above sendPolicy.gapMs.max'],
      [{ proxy: { url: 'http://169.254.169.254' } }, 'proxy.url targets a forbidden address'],
      ['all', 'settings must be an object'],
    ] as const) {
      const id = newId();
      expect(await api.call('POST', '/accounts', { id, settings })).toMatchObject({ status: 400, body: { ok: false, error } });
      expect((await api.call('GET', `/accounts/${id}`)).status).toBe(404);
    }
  });
});

describe('access', () => {
  it("an account key reads and changes its own account's settings, not another's", async () => {
    const ADMIN = 'settings-admin-0123456789abcdef';
    const keyed = await startTestApi({ ...stack, config: { ...stack.config, API_KEY: ADMIN } });
    try {
      const admin = { authorization: `Bearer ${ADMIN}` };
      const mine = await newAccount();
      const other = await newAccount();
      const created = await keyed.call('POST', `/accounts/${mine}/keys`, {}, admin);
      const key = { authorization: `Bearer ${String(created.body.secret)}` };
      expect((await keyed.call('GET', `/accounts/${mine}/settings`, undefined, key)).status).toBe(200);
      expect((await keyed.call('PATCH', `/accounts/${mine}/settings`, { ignoreGroups: true }, key)).body.settings).toMatchObject({
        ignoreGroups: true,
      });
      expect(await keyed.call('GET', `/accounts/${other}/settings`, undefined, key)).toMatchObject({ status: 403 });
      expect(await keyed.call('PATCH', `/accounts/${other}/settings`, { ignoreGroups: true }, key)).toMatchObject({ status: 403 });
      expect((await keyed.call('GET', `/accounts/${other}/settings`)).status).toBe(401);
      expect((await settingsOf(other)).ignoreGroups).toBe(false);
    } finally {
      await keyed.close();
    }
  });
});
