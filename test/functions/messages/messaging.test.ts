import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { updateAccountStatus, writeSendPause } from '../../../core/store/accounts.js';
import { findOutbound } from '../../../core/store/outbound.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import type { Command } from '../../../core/schemas/command.js';
import { startFakeConnector, type FakeConnector, type Outcome } from '../../support/fake-connector.js';
import { startTestApi } from '../../support/test-api.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';

const TO = '15551234567@s.whatsapp.net';
/** Recipients the fake connector treats specially. */
const FAILING_TO = '15550000000@s.whatsapp.net';
const SILENT_TO = '15559999999@s.whatsapp.net';
/** Claimed only once the API has failed the send (a connector seeing the command too late). */
const LATE_TO = '15558888888@s.whatsapp.net';
/** Claimed at once, reported sent only after the API's deadline (a slow network). */
const SLOW_TO = '15557777777@s.whatsapp.net';

let stack: TestStack;
let api: Awaited<ReturnType<typeof startTestApi>>;
let connector: FakeConnector;
let table: Table;
let counter = 0;

const messageIdOf = (command: Command) => ('messageId' in command.payload ? command.payload.messageId : '');

function decide(command: Command): Outcome {
  const to = 'to' in command.payload ? command.payload.to : '';
  const outbound = () => findOutbound(table, command.accountId, messageIdOf(command));
  if (to === FAILING_TO) return { outcome: 'failed', reason: 'recipient is not on WhatsApp' };
  if (to === SILENT_TO) return { outcome: 'ignore' };
  if (to === LATE_TO) {
    return {
      outcome: 'sent',
      beforeClaim: async () => {
        await waitFor('the API to give up', async () => (await outbound())?.status === 'failed');
      },
    };
  }
  if (to === SLOW_TO) {
    return {
      outcome: 'sent',
      afterClaim: async () => {
        const deadline = (await outbound())?.deadline ?? 0;
        await waitFor('the deadline to pass', () => Date.now() > deadline, { intervalMs: 20 });
      },
    };
  }
  return { outcome: 'sent' };
}

const sendsOf = (accountId: string) => connector.sent.filter((s) => s.accountId === accountId).map((s) => s.messageId);
const commandsOf = (accountId: string) => connector.commands.filter((c) => c.accountId === accountId && c.type !== 'connect');

/** A fresh account, connected unless told otherwise. */
async function account(connected = true): Promise<string> {
  const id = `msg${Date.now().toString(36)}${counter++}`;
  expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  if (connected) await updateAccountStatus(table, id, { status: 'connected' });
  return id;
}

beforeAll(async () => {
  stack = await startTestStack({ overrides: { SEND_TIMEOUT_MS: '1500' } });
  table = tableOf(stack.config, stack.clients);
  api = await startTestApi(stack);
  connector = startFakeConnector(stack, decide);
});
afterAll(async () => {
  await connector?.stop();
  await api?.close();
  await stack?.stop();
});

describe('POST /accounts/:id/message/send', () => {
  it('sent by the connector: 200 {ok, messageId} and a send_text command with that id', async () => {
    const id = await account();
    const { status, body } = await api.call('POST', `/accounts/${id}/message/send`, { to: TO, message: 'Hi 👋\nthere' });
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['messageId', 'ok']);
    expect(body.messageId).toMatch(/^3EB0[0-9A-F]{36}$/);
    const command = await connector.waitFor((c) => c.type === 'send_text' && c.accountId === id);
    expect(command.payload).toEqual({ messageId: body.messageId, to: TO, text: 'Hi 👋\nthere' });
    expect(await findOutbound(table, id, String(body.messageId))).toMatchObject({ status: 'sent' });
  });

  it('missing to or message: 400 to and message are required', async () => {
    const id = await account();
    for (const payload of [{ to: TO }, { message: 'x' }, {}, { to: TO, message: '' }, { to: 5, message: 'x' }]) {
      expect(await api.call('POST', `/accounts/${id}/message/send`, payload)).toMatchObject({
        status: 400,
        body: { ok: false, error: 'to and message are required' },
      });
    }
  });

  it('a malformed JID: 400 naming the field', async () => {
    const id = await account();
    for (const to of ['+15551234567', '1555 1234567@s.whatsapp.net', 'abc@g.us']) {
      expect(await api.call('POST', `/accounts/${id}/message/send`, { to, message: 'x' })).toMatchObject({
        status: 400,
        body: { ok: false, error: 'to must be a valid JID' },
      });
    }
  });

  it('a group JID is accepted', async () => {
    const id = await account();
    const { status } = await api.call('POST', `/accounts/${id}/message/send`, {
      to: '15551234567-1600000000@g.us',
      message: 'hello group',
    });
    expect(status).toBe(200);
  });

  it('failed at the network: 500 internal_error with the reason as detail', async () => {
    const id = await account();
    expect(await api.call('POST', `/accounts/${id}/message/send`, { to: FAILING_TO, message: 'x' })).toMatchObject({
      status: 500,
      body: { ok: false, error: 'internal_error', detail: 'recipient is not on WhatsApp' },
    });
  });

  it('account not connected: 500 internal_error at once, nothing enqueued', async () => {
    const id = await account(false);
    const { status, body } = await api.call('POST', `/accounts/${id}/message/send`, { to: TO, message: 'x' });
    expect(status).toBe(500);
    expect(body).toMatchObject({ ok: false, error: 'internal_error' });
    expect(String(body.detail)).toMatch(/connecting, not connected/);
    // The account's connect command proves the queue was read after our request.
    await api.call('POST', `/accounts/${id}/disconnect`);
    await connector.waitFor((c) => c.type === 'disconnect' && c.accountId === id);
    expect(connector.commands.some((c) => c.type === 'send_text' && c.accountId === id)).toBe(false);
  });

  it('sending paused after a refusal: 500 at once with retryAfter and Retry-After, nothing enqueued; read receipts still go', async () => {
    const id = await account();
    const until = Date.now() + 90_000;
    await writeSendPause(table, id, { reason: 'reachout_timelock', until, durationMs: 120_000 });
    const { status, body, headers } = await api.call('POST', `/accounts/${id}/message/send`, { to: TO, message: 'x' });
    expect(status).toBe(500);
    expect(body).toMatchObject({ ok: false, error: 'internal_error', detail: 'sending paused: reachout_timelock' });
    expect(body.retryAfter).toBeGreaterThan(80);
    expect(body.retryAfter).toBeLessThanOrEqual(90);
    expect(headers.get('retry-after')).toBe(String(body.retryAfter));
    expect((await api.call('GET', `/accounts/${id}`)).body.account).toMatchObject({ sendPause: { reason: 'reachout_timelock', until } });
    // Not a message: the pause does not hold it. Its command also proves the queue was read after the send.
    expect((await api.call('POST', `/accounts/${id}/chats/${TO}/read`)).status).toBe(200);
    expect(commandsOf(id).map((c) => c.type)).toEqual(['mark_chat_read']);
  });

  it('a pause that ended is not shown and holds nothing', async () => {
    const id = await account();
    await writeSendPause(table, id, { reason: 'rate_limited', until: Date.now() - 1, durationMs: 60_000 });
    expect((await api.call('GET', `/accounts/${id}`)).body.account).not.toHaveProperty('sendPause');
    expect((await api.call('POST', `/accounts/${id}/message/send`, { to: TO, message: 'x' })).status).toBe(200);
  });

  it('account reconnecting: the send is queued for when the socket is back (sent then, 500 at the deadline otherwise)', async () => {
    const id = await account();
    await updateAccountStatus(table, id, { status: 'reconnecting' });
    const { status, body } = await api.call('POST', `/accounts/${id}/message/send`, { to: TO, message: 'x' });
    expect(status).toBe(200);
    expect(sendsOf(id)).toEqual([body.messageId]);
  });

  it('account not connected: a bad request is still 400 with its own message, judged before the account state', async () => {
    const id = await account(false);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['send', { to: TO }, 'to and message are required'],
      ['send', { to: 'nobody', message: 'x' }, 'to must be a valid JID'],
      ['reply', { to: TO, message: 'x' }, 'to, message and quotedMessageId are required'],
      ['react', { to: TO, messageId: 'A1', emoji: 'ok' }, 'emoji must be a single emoji'],
      ['delete', { messageId: 'A1' }, 'to and messageId are required'],
    ];
    for (const [route, payload, error] of cases) {
      expect({ route, ...(await api.call('POST', `/accounts/${id}/message/${route}`, payload)) }).toMatchObject({
        route,
        status: 400,
        body: { ok: false, error },
      });
    }
  });

  it('unknown account: 404 Account not found even when the body is bad too', async () => {
    const id = `nosuch${Date.now().toString(36)}${counter++}`;
    for (const [route, payload] of [
      ['send', {}],
      ['send', { to: 'nobody', message: 'x' }],
      ['reply', { to: TO }],
      ['react', { emoji: 'ok' }],
      ['delete', {}],
    ] as const) {
      expect({ route, ...(await api.call('POST', `/accounts/${id}/message/${route}`, payload)) }).toMatchObject({
        route,
        status: 404,
        body: { ok: false, error: 'Account not found' },
      });
    }
    const notJson = await api.call('POST', `/accounts/${id}/message/send`, 'not json');
    expect(notJson).toMatchObject({ status: 404, body: { ok: false, error: 'Account not found' } });
  });

  it('no answer within SEND_TIMEOUT_MS: 500 internal_error and the send is marked failed', async () => {
    const id = await account();
    const { status, body } = await api.call('POST', `/accounts/${id}/message/send`, { to: SILENT_TO, message: 'x' });
    expect(status).toBe(500);
    expect(body).toMatchObject({ ok: false, error: 'internal_error' });
    expect(String(body.detail)).toMatch(/no answer from the connector/);
    const command = await connector.waitFor((c) => c.type === 'send_text' && c.accountId === id);
    const messageId = 'messageId' in command.payload ? command.payload.messageId : '';
    expect(await findOutbound(table, id, messageId)).toMatchObject({ status: 'failed' });
  });

  it('text longer than 4096 characters: 500 internal_error', async () => {
    const id = await account();
    const { status, body } = await api.call('POST', `/accounts/${id}/message/send`, { to: TO, message: 'x'.repeat(4097) });
    expect(status).toBe(500);
    expect(body).toMatchObject({ ok: false, error: 'internal_error' });
  });
});

describe('POST /accounts/:id/message/reply', () => {
  it('200 {ok, messageId}; the chat comes from the quoted message when omitted', async () => {
    const id = await account();
    const group = '15551234567-1600000000@g.us';
    await putMessage(table, id, { messageId: 'Q1', from: TO, chatId: group, timestamp: 1, type: 'text', fromMe: false, text: 'q' });
    const { status, body } = await api.call('POST', `/accounts/${id}/message/reply`, {
      to: TO,
      message: 'answer',
      quotedMessageId: 'Q1',
    });
    expect(status).toBe(200);
    expect(body.messageId).toMatch(/^3EB0/);
    const command = await connector.waitFor((c) => c.type === 'send_reply' && c.accountId === id);
    expect(command.payload).toMatchObject({ chatId: group, quotedMessageId: 'Q1', text: 'answer', to: TO });
  });

  it('missing fields: 400 to, message and quotedMessageId are required', async () => {
    const id = await account();
    expect(await api.call('POST', `/accounts/${id}/message/reply`, { to: TO, message: 'x' })).toMatchObject({
      status: 400,
      body: { ok: false, error: 'to, message and quotedMessageId are required' },
    });
  });
});

describe('POST /accounts/:id/message/react', () => {
  it('200 {ok, message} with a single emoji (ZWJ sequences and flags count as one)', async () => {
    const id = await account();
    for (const emoji of ['👍', '👨‍👩‍👧', '🇧🇷', '❤️']) {
      const { status, body } = await api.call('POST', `/accounts/${id}/message/react`, { to: TO, messageId: 'A1B2', emoji });
      expect({ emoji, status }).toEqual({ emoji, status: 200 });
      expect(body.ok).toBe(true);
      expect(typeof body.message).toBe('string');
    }
    const command = await connector.waitFor((c) => c.type === 'send_reaction' && c.accountId === id);
    expect(command.payload).toMatchObject({ to: TO, targetMessageId: 'A1B2', emoji: '👍' });
  });

  it('missing fields: 400; not a single emoji: 400', async () => {
    const id = await account();
    expect(await api.call('POST', `/accounts/${id}/message/react`, { to: TO, messageId: 'A1' })).toMatchObject({
      status: 400,
      body: { ok: false, error: 'to, messageId and emoji are required' },
    });
    for (const emoji of ['ok', '👍👍']) {
      expect(await api.call('POST', `/accounts/${id}/message/react`, { to: TO, messageId: 'A1', emoji })).toMatchObject({
        status: 400,
        body: { ok: false, error: 'emoji must be a single emoji' },
      });
    }
  });
});

describe('POST /accounts/:id/message/delete', () => {
  it('200 {ok, message} and a delete_message command', async () => {
    const id = await account();
    const { status, body } = await api.call('POST', `/accounts/${id}/message/delete`, { to: TO, messageId: 'D1' });
    expect(status).toBe(200);
    expect(body.ok).toBe(true);
    expect(typeof body.message).toBe('string');
    const command = await connector.waitFor((c) => c.type === 'delete_message' && c.accountId === id);
    expect(command.payload).toMatchObject({ to: TO, targetMessageId: 'D1' });
  });

  it('missing fields: 400 to and messageId are required; a bad message id: 400', async () => {
    const id = await account();
    expect(await api.call('POST', `/accounts/${id}/message/delete`, { to: TO })).toMatchObject({
      status: 400,
      body: { ok: false, error: 'to and messageId are required' },
    });
    const bad = await api.call('POST', `/accounts/${id}/message/delete`, { to: TO, messageId: '../x' });
    expect(bad.status).toBe(400);
  });
});

describe('a send happens within its API call or never', () => {
  it('the API gives up before the connector takes it: 500 not sent, and the late claim is refused', async () => {
    const id = await account();
    const { status, body } = await api.call('POST', `/accounts/${id}/message/send`, { to: LATE_TO, message: 'late' });
    expect(status).toBe(500);
    expect(body).toMatchObject({ ok: false, error: 'internal_error' });
    expect(String(body.detail)).toMatch(/no answer from the connector within 1500 ms; not sent/);
    const messageId = messageIdOf(await connector.waitFor((c) => c.type === 'send_text' && c.accountId === id));
    await vi.waitFor(() => expect(connector.refused).toContainEqual({ accountId: id, messageId }), { timeout: 20_000 });
    expect(sendsOf(id)).toEqual([]);
    expect(await findOutbound(table, id, messageId)).toMatchObject({ status: 'failed' });
  });

  it('the connector took it before the deadline and reports after it: 200, sent once', async () => {
    const id = await account();
    const { status, body } = await api.call('POST', `/accounts/${id}/message/send`, { to: SLOW_TO, message: 'slow' });
    expect(body).toMatchObject({ ok: true });
    expect(status).toBe(200);
    expect(sendsOf(id)).toEqual([body.messageId]);
    expect(await findOutbound(table, id, String(body.messageId))).toMatchObject({ status: 'sent' });
  });

  it('the client disconnects before the connector takes it: failed at once, never sent', async () => {
    const id = await account();
    const abort = new AbortController();
    const request = api.call('POST', `/accounts/${id}/message/send`, { to: LATE_TO, message: 'gone' }, {}, abort.signal);
    const messageId = messageIdOf(await connector.waitFor((c) => c.type === 'send_text' && c.accountId === id));
    abort.abort();
    await expect(request).rejects.toThrow();
    await vi.waitFor(() => expect(connector.refused).toContainEqual({ accountId: id, messageId }), { timeout: 20_000 });
    expect(await findOutbound(table, id, messageId)).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/client disconnected/),
    });
    expect(sendsOf(id)).toEqual([]);
  });
});

describe('Idempotency-Key', () => {
  const send = (id: string, key: string, payload: Record<string, unknown> = { to: TO, message: 'once' }, path = 'send') =>
    api.call('POST', `/accounts/${id}/message/${path}`, payload, { 'Idempotency-Key': key });

  it('a replay answers the first answer (same messageId) and sends nothing again', async () => {
    const id = await account();
    const first = await send(id, 'order-1');
    expect(first.status).toBe(200);
    const again = await send(id, 'order-1');
    expect(again).toMatchObject({ status: 200, body: first.body });
    expect(sendsOf(id)).toEqual([first.body.messageId]);
    expect(commandsOf(id)).toHaveLength(1);
  });

  it('a replay still answers 200 after the account disconnected', async () => {
    const id = await account();
    const first = await send(id, 'k');
    expect(first.status).toBe(200);
    await updateAccountStatus(table, id, { status: 'reconnecting' });
    expect(await send(id, 'k')).toMatchObject({ status: 200, body: first.body });
    expect(commandsOf(id)).toHaveLength(1);
  });

  it('a failed send is answered the same way again, without a second try', async () => {
    const id = await account();
    const first = await send(id, 'k', { to: FAILING_TO, message: 'x' });
    expect(first).toMatchObject({ status: 500, body: { ok: false, error: 'internal_error', detail: 'recipient is not on WhatsApp' } });
    expect(await send(id, 'k', { to: FAILING_TO, message: 'x' })).toMatchObject({ status: 500, body: first.body });
    expect(commandsOf(id)).toHaveLength(1);
  });

  it('the same key with a different body or route: 409', async () => {
    const id = await account();
    expect((await send(id, 'k')).status).toBe(200);
    const conflict = { status: 409, body: { ok: false, error: 'Idempotency-Key reused with a different request' } };
    expect(await send(id, 'k', { to: TO, message: 'other text' })).toMatchObject(conflict);
    expect(await send(id, 'k', { to: TO, message: 'once', quotedMessageId: 'Q1' }, 'reply')).toMatchObject(conflict);
    expect(commandsOf(id)).toHaveLength(1);
  });

  it('concurrent requests with one key: one send, every answer the same', async () => {
    const id = await account();
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(id, 'burst', { to: SLOW_TO, message: 'burst' })));
    const first = answers[0]!;
    expect(first.status).toBe(200);
    for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: first.body });
    expect(sendsOf(id)).toEqual([first.body.messageId]);
    expect(commandsOf(id)).toHaveLength(1);
  });

  it('the same key on two accounts: two independent sends', async () => {
    const [a, b] = [await account(), await account()];
    const [onA, onB] = [await send(a, 'shared'), await send(b, 'shared')];
    expect([onA.status, onB.status]).toEqual([200, 200]);
    expect(onA.body.messageId).not.toBe(onB.body.messageId);
    expect(sendsOf(a)).toEqual([onA.body.messageId]);
    expect(sendsOf(b)).toEqual([onB.body.messageId]);
  });

  it('react and delete replay their {ok, message} answer', async () => {
    const id = await account();
    const react = { to: TO, messageId: 'R1', emoji: '👍' };
    const first = await send(id, 'r', react, 'react');
    expect(first.status).toBe(200);
    expect(await send(id, 'r', react, 'react')).toMatchObject({ status: 200, body: first.body });
    const remove = { to: TO, messageId: 'R1' };
    const deleted = await send(id, 'd', remove, 'delete');
    expect(await send(id, 'd', remove, 'delete')).toMatchObject({ status: 200, body: deleted.body });
    expect(commandsOf(id).map((c) => c.type)).toEqual(['send_reaction', 'delete_message']);
  });

  it('a key that is empty, longer than 255 characters or not printable ASCII: 400', async () => {
    const id = await account();
    for (const key of ['', 'x'.repeat(256), 'caf\u00e9']) {
      expect(await send(id, key)).toMatchObject({
        status: 400,
        body: { ok: false, error: 'Idempotency-Key must be 1 to 255 printable ASCII characters' },
      });
    }
    expect((await send(id, 'x'.repeat(255))).status).toBe(200);
    expect(commandsOf(id)).toHaveLength(1);
  });
});
