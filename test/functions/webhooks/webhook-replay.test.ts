import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageEventFor } from '../../../core/message-event.js';
import { createQueues, type Queues } from '../../../core/queues.js';
import type { Message } from '../../../core/schemas/message.js';
import type { WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { updateChat } from '../../../core/store/chats.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { createApp } from '../../../functions/app.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';
import { silentLogger, type TestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';

/**
 * POST /webhooks/:webhookId/replay through HTTP: the stored messages the webhook selects are
 * queued again, for it alone, with their original event ids; read back from the webhook queue.
 */
let stack: TestStack;
let api: TestApi;
let table: Table;
let queues: Queues;
let stopStack: (() => Promise<void>) | undefined;
let counter = 0;
const unique = () => `${Date.now().toString(36)}${counter++}`;
/** Each case stores its messages in its own stretch of time, so ranges never overlap across cases. */
let era = 1_700_000_000_000;
const nextEra = () => (era += 1_000_000_000);

beforeAll(async () => {
  ({ stack, api, stop: stopStack } = await startApiStack());
  table = tableOf(stack.config, stack.clients);
  queues = createQueues(stack.config, stack.clients, silentLogger);
});
afterAll(async () => {
  await stopStack?.();
});

async function newAccount() {
  const id = `rp${unique()}`;
  expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  return id;
}

async function register(path: string, body: Record<string, unknown>) {
  const answer = await api.call('POST', path, { url: `http://127.0.0.1:9/${unique()}`, ...body });
  expect(answer.status).toBe(201);
  return String((answer.body.webhook as { webhookId: string }).webhookId);
}

/** Stores a message as the inbound pipeline does: its row, and its chat's activity. */
async function store(accountId: string, chatId: string, timestamp: number, fromMe = false): Promise<Message> {
  const message: Message = {
    messageId: `M${unique().toUpperCase()}`,
    from: fromMe ? '15550000001@s.whatsapp.net' : chatId,
    chatId,
    timestamp,
    type: 'text',
    fromMe,
    text: `text ${timestamp}`,
  };
  await putMessage(table, accountId, message);
  await updateChat(table, accountId, chatId, { at: timestamp, unread: fromMe ? 0 : 1 });
  return message;
}

const chat = (n: number) => `1555${String(n).padStart(7, '0')}@s.whatsapp.net`;

/** Every event in the webhook queue, `expected` of them, then checks that nothing else is there. */
async function drain(expected: number): Promise<WebhookEvent[]> {
  const events: WebhookEvent[] = [];
  // Received events stay in flight (invisible) for longer than the suite runs: nothing is read twice.
  await waitFor(
    `${expected} replayed events`,
    async () => {
      const received = await queues.receiveWebhookEvents({ waitSeconds: 1, visibilityTimeoutSeconds: 600 });
      events.push(...received.map((r) => r.body));
      return events.length >= expected;
    },
    { intervalMs: 0 },
  );
  expect(events).toHaveLength(expected);
  expect(await queues.receiveWebhookEvents({ waitSeconds: 0 })).toEqual([]);
  return events;
}

const replayed = (accountId: string, message: Message, webhookId: string) => ({
  ...messageEventFor(accountId, message),
  createdAt: expect.any(Number),
  webhookId,
});
const byId = (a: { eventId: string }, b: { eventId: string }) => a.eventId.localeCompare(b.eventId);

describe('POST /webhooks/:webhookId/replay', () => {
  it("queues exactly the received messages in [since, until] of every account, with the original ids and the webhook's id", async () => {
    const [a, b] = [await newAccount(), await newAccount()];
    const t = nextEra();
    const webhookId = await register('/webhooks', { events: ['message', 'qr'] });
    const before = await store(a, chat(1), t - 1);
    const atSince = await store(a, chat(1), t);
    const inside = await store(a, chat(2), t + 500);
    const fromMe = await store(a, chat(2), t + 600, true);
    const otherAccount = await store(b, chat(1), t + 700);
    const atUntil = await store(b, chat(3), t + 1000);
    const after = await store(b, chat(3), t + 1001);

    const answer = await api.call('POST', `/webhooks/${webhookId}/replay`, { since: t, until: t + 1000 });
    expect(answer).toMatchObject({ status: 202, body: { ok: true, queued: 4 } });
    const events = await drain(4);
    expect(events.sort(byId)).toEqual(
      [
        replayed(a, atSince, webhookId),
        replayed(a, inside, webhookId),
        replayed(b, otherAccount, webhookId),
        replayed(b, atUntil, webhookId),
      ].sort(byId),
    );
    const ids = events.map((e) => e.eventId);
    for (const left of [before, fromMe, after]) expect(ids.join()).not.toContain(left.messageId);
    expect(ids).toContain(`${a}:${atSince.messageId}`);

    // accountId narrows a global webhook to one account.
    const narrowed = await api.call('POST', `/webhooks/${webhookId}/replay`, { since: t, until: t + 1000, accountId: b });
    expect(narrowed.body).toEqual({ ok: true, queued: 2 });
    expect((await drain(2)).map((e) => e.accountId)).toEqual([b, b]);
  });

  it('a scoped webhook replays its own account only; another accountId is 400', async () => {
    const [mine, other] = [await newAccount(), await newAccount()];
    const t = nextEra();
    const webhookId = await register(`/accounts/${mine}/webhooks`, { events: ['*'] });
    const own = await store(mine, chat(1), t + 1);
    await store(other, chat(1), t + 2);

    expect((await api.call('POST', `/webhooks/${webhookId}/replay`, { since: t, until: t + 10 })).body).toEqual({ ok: true, queued: 1 });
    expect(await drain(1)).toEqual([replayed(mine, own, webhookId)]);

    expect(await api.call('POST', `/webhooks/${webhookId}/replay`, { since: t, accountId: other })).toMatchObject({
      status: 400,
      body: { ok: false, error: "accountId is outside this webhook's scope" },
    });
    // The account's own path reaches its webhook; a global one is not found there.
    expect((await api.call('POST', `/accounts/${mine}/webhooks/${webhookId}/replay`, { since: t, until: t + 10 })).body).toEqual({
      ok: true,
      queued: 1,
    });
    await drain(1);
    const global = await register('/webhooks', {});
    expect(await api.call('POST', `/accounts/${mine}/webhooks/${global}/replay`, { since: t })).toMatchObject({
      status: 404,
      body: { error: 'Webhook not found' },
    });
  });

  it('with WEBHOOK_INCLUDE_FROM_ME=true the account’s own messages are replayed too', async () => {
    const id = await newAccount();
    const t = nextEra();
    const webhookId = await register(`/accounts/${id}/webhooks`, {});
    const received = await store(id, chat(1), t + 1);
    const sent = await store(id, chat(1), t + 2, true);
    const app = createApp({ config: { ...stack.config, WEBHOOK_INCLUDE_FROM_ME: true }, clients: stack.clients, logger: silentLogger });
    const response = await app.request(`/webhooks/${webhookId}/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ since: t, until: t + 10 }),
    });
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 202, body: { ok: true, queued: 2 } });
    expect((await drain(2)).sort(byId)).toEqual([replayed(id, received, webhookId), replayed(id, sent, webhookId)].sort(byId));
  });

  it('pages through more chats and more messages than one page holds, skipping chats quiet since before `since`', async () => {
    const id = await newAccount();
    const t = nextEra();
    const webhookId = await register(`/accounts/${id}/webhooks`, {});
    const expected: Message[] = [];
    // 110 chats with one message each in the range (pages hold 100), 5 chats whose last message is older.
    for (let start = 0; start < 110; start += 22) {
      expected.push(...(await Promise.all(Array.from({ length: 22 }, (_, i) => store(id, chat(start + i), t + 10 + start + i)))));
    }
    await Promise.all(Array.from({ length: 5 }, (_, i) => store(id, chat(500 + i), t - 100 + i)));
    // One chat with 105 messages in the range.
    for (let start = 0; start < 105; start += 21) {
      expected.push(...(await Promise.all(Array.from({ length: 21 }, (_, i) => store(id, chat(999), t + 1_000 + start + i)))));
    }

    const answer = await api.call('POST', `/webhooks/${webhookId}/replay`, { since: t });
    expect(answer).toMatchObject({ status: 202, body: { ok: true, queued: 215 } });
    const events = await drain(215);
    expect(events.map((e) => e.eventId).sort()).toEqual(expected.map((m) => `${id}:${m.messageId}`).sort());
    expect(new Set(events.map((e) => e.webhookId))).toEqual(new Set([webhookId]));
  });

  it('an empty range queues nothing', async () => {
    const id = await newAccount();
    const t = nextEra();
    const webhookId = await register(`/accounts/${id}/webhooks`, {});
    await store(id, chat(1), t + 100);
    expect((await api.call('POST', `/webhooks/${webhookId}/replay`, { since: t + 101 })).body).toEqual({ ok: true, queued: 0 });
    expect((await api.call('POST', `/webhooks/${webhookId}/replay`, { since: t, until: t + 99 })).body).toEqual({ ok: true, queued: 0 });
    await drain(0);
  });
});

describe('replay errors', () => {
  it('bad bodies are 400 with the field named, before any lookup', async () => {
    const unknown = `wh_${'B'.repeat(22)}`;
    const cases: [unknown, string][] = [
      [{}, 'since is required'],
      [{ since: '1767225600000' }, 'since must be a Unix time in milliseconds'],
      [{ since: -1 }, 'since must be a Unix time in milliseconds'],
      [{ since: 1.5 }, 'since must be a Unix time in milliseconds'],
      [{ since: 10, until: 'now' }, 'until must be a Unix time in milliseconds'],
      [{ since: 10, until: 9 }, 'since must not be after until'],
      [{ since: 10, accountId: 'not an id' }, 'accountId must be an account id'],
    ];
    for (const [body, error] of cases) {
      expect(await api.call('POST', `/webhooks/${unknown}/replay`, body)).toMatchObject({ status: 400, body: { ok: false, error } });
    }
  });

  it('an unknown webhook or account is 404; a webhook without message events is 400', async () => {
    expect(await api.call('POST', `/webhooks/wh_${'C'.repeat(22)}/replay`, { since: 0 })).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Webhook not found' },
    });
    expect(await api.call('POST', '/webhooks/nope/replay', { since: 0 })).toMatchObject({
      status: 404,
      body: { error: 'Webhook not found' },
    });
    const global = await register('/webhooks', {});
    expect(await api.call('POST', `/webhooks/${global}/replay`, { since: 0, accountId: 'nosuchaccount' })).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Account not found' },
    });
    const statusOnly = await register('/webhooks', { events: ['message.status', 'session.status'] });
    expect(await api.call('POST', `/webhooks/${statusOnly}/replay`, { since: 0 })).toMatchObject({
      status: 400,
      body: { ok: false, error: 'webhook does not receive message events' },
    });
    await drain(0);
  });
});
