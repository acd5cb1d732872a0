import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command, CommandOf } from '../../../core/schemas/command.js';
import { updateAccountStatus } from '../../../core/store/accounts.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import type { FakeConnector } from '../../support/fake-connector.js';
import { fixtures } from '../../support/media-fixtures.js';
import { startApiStack, type TestApi } from '../../support/test-api.js';
import type { TestStack } from '../../support/test-stack.js';

const TO = '15551234567@s.whatsapp.net';

let stack: TestStack;
let api: TestApi;
let connector: FakeConnector;
let table: Table;
let stopStack: () => Promise<void>;
let counter = 0;

async function account(connected = true): Promise<string> {
  const id = `kinds${Date.now().toString(36)}${counter++}`;
  expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  if (connected) await updateAccountStatus(table, id, { status: 'connected' });
  return id;
}

function commandOf<T extends Command['type']>(accountId: string, type: T): CommandOf<T> {
  const found = connector.commands.find((c) => c.accountId === accountId && c.type === type);
  if (!found) throw new Error(`no ${type} command for ${accountId}`);
  return found as CommandOf<T>;
}

beforeAll(async () => {
  ({ stack, api, connector, stop: stopStack } = await startApiStack());
  table = tableOf(stack.config, stack.clients);
});
afterAll(async () => {
  await stopStack?.();
});

describe('new message kinds: validation before the account state', () => {
  // The account is not connected: a body that gets past validation would be a 500, so each 400 here is validation's.
  const cases: [string, string, unknown, string][] = [
    ['location', 'message/send/location', { to: TO, latitude: 1 }, 'to, latitude and longitude are required'],
    ['location', 'message/send/location', { to: TO, latitude: 91, longitude: 0 }, 'latitude must be a number from -90 to 90'],
    ['location', 'message/send/location', { to: TO, latitude: 0, longitude: '13' }, 'longitude must be a number from -180 to 180'],
    ['location', 'message/send/location', { to: 'nobody', latitude: 0, longitude: 0 }, 'to must be a valid JID'],
    ['contact', 'message/send/contact', { to: TO }, 'to and contacts are required'],
    ['contact', 'message/send/contact', { to: TO, contacts: [] }, 'contacts must be an array of 1 to 10 contacts'],
    [
      'contact',
      'message/send/contact',
      { to: TO, contacts: [{ name: 'Ada', phone: 'abc' }] },
      'contacts[].phone must be digits with country code',
    ],
    ['contact', 'message/send/contact', { to: TO, contacts: [{ phone: '4915112345678' }] }, 'contacts[].name is required'],
    ['poll', 'message/send/poll', { to: TO, name: 'Lunch?' }, 'to, name and options are required'],
    ['poll', 'message/send/poll', { to: TO, name: 'Lunch?', options: ['only'] }, 'options must be 2 to 12 different, non-empty strings'],
    ['poll', 'message/send/poll', { to: TO, name: 'Lunch?', options: ['a', 'a'] }, 'options must be 2 to 12 different, non-empty strings'],
    [
      'poll',
      'message/send/poll',
      { to: TO, name: 'Lunch?', options: Array.from({ length: 13 }, (_, i) => `o${i}`) },
      'options must be 2 to 12 different, non-empty strings',
    ],
    [
      'poll',
      'message/send/poll',
      { to: TO, name: 'Lunch?', options: ['a', 'b'], selectableCount: 3 },
      'selectableCount must be an integer from 0 (any number) to the number of options',
    ],
    ['edit', 'message/edit', { to: TO, messageId: 'ABC' }, 'to, messageId and message are required'],
    ['edit', 'message/edit', { to: TO, messageId: 'not an id!', message: 'x' }, 'messageId must be a message id (letters and digits)'],
    ['forward', 'message/forward', { to: TO }, 'to and messageId are required'],
    ['presence', 'presence', { chatId: TO }, 'chatId and state are required'],
    ['presence', 'presence', { chatId: TO, state: 'dancing' }, 'state must be one of typing, recording, paused, available, unavailable'],
    ['presence', 'presence', { chatId: 'nobody', state: 'typing' }, 'chatId must be a valid JID'],
  ];
  it.each(cases)('%s %s %j: 400 %s', async (_kind, path, body, error) => {
    const id = await account(false);
    const { status, body: answer } = await api.call('POST', `/accounts/${id}/${path}`, body);
    expect({ status, answer }).toEqual({ status: 400, answer: { ok: false, error } });
  });

  it('an unknown account is 404 before its body is judged', async () => {
    const { status } = await api.call('POST', '/accounts/nosuchaccount/message/send/poll', { to: TO });
    expect(status).toBe(404);
  });
});

describe('new message kinds: commands', () => {
  it('location, contact and poll: 200 {ok, messageId} and their commands', async () => {
    const id = await account();
    const location = await api.call('POST', `/accounts/${id}/message/send/location`, {
      to: TO,
      latitude: 52.52,
      longitude: 13.405,
      name: 'Tor',
    });
    expect(location.status).toBe(200);
    expect(commandOf(id, 'send_location').payload).toMatchObject({ to: TO, latitude: 52.52, longitude: 13.405, name: 'Tor' });
    expect(location.body).toEqual({ ok: true, messageId: commandOf(id, 'send_location').payload.messageId });

    const contact = await api.call('POST', `/accounts/${id}/message/send/contact`, {
      to: TO,
      contacts: [{ name: 'Ada', phone: '+44 20-7946 0000' }],
    });
    expect(contact.status).toBe(200);
    expect(commandOf(id, 'send_contact').payload.contacts).toEqual([{ name: 'Ada', phone: '442079460000' }]);

    const poll = await api.call('POST', `/accounts/${id}/message/send/poll`, { to: TO, name: 'Lunch?', options: ['Pizza', 'Sushi'] });
    expect(poll.status).toBe(200);
    expect(commandOf(id, 'send_poll').payload).toMatchObject({ name: 'Lunch?', options: ['Pizza', 'Sushi'], selectableCount: 1 });
  });

  it('an Idempotency-Key answers a repeated location send with the first messageId and queues one command', async () => {
    const id = await account();
    const body = { to: TO, latitude: 1, longitude: 2 };
    const first = await api.call('POST', `/accounts/${id}/message/send/location`, body, { 'idempotency-key': 'loc-1' });
    const again = await api.call('POST', `/accounts/${id}/message/send/location`, body, { 'idempotency-key': 'loc-1' });
    const other = await api.call('POST', `/accounts/${id}/message/send/location`, { ...body, latitude: 3 }, { 'idempotency-key': 'loc-1' });
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(other.status).toBe(409);
    expect(connector.commands.filter((c) => c.accountId === id && c.type === 'send_location')).toHaveLength(1);
  });

  it('edit: 404 for an unknown message, 400 outside the 15-minute window or for a received one, 200 within', async () => {
    const id = await account();
    const base = { chatId: TO, type: 'text' as const, text: 'old' };
    await putMessage(table, id, { ...base, messageId: 'FRESH1', from: 'me@s.whatsapp.net', fromMe: true, timestamp: Date.now() });
    await putMessage(table, id, {
      ...base,
      messageId: 'STALE1',
      from: 'me@s.whatsapp.net',
      fromMe: true,
      timestamp: Date.now() - 16 * 60_000,
    });
    await putMessage(table, id, { ...base, messageId: 'THEIRS1', from: TO, fromMe: false, timestamp: Date.now() });
    const edit = (messageId: string) => api.call('POST', `/accounts/${id}/message/edit`, { to: TO, messageId, message: 'new' });

    expect(await edit('NOSUCH1')).toMatchObject({ status: 404, body: { ok: false, error: 'Message not found' } });
    expect(await edit('STALE1')).toMatchObject({
      status: 400,
      body: { ok: false, error: 'messages can be edited only within 15 minutes of sending' },
    });
    expect(await edit('THEIRS1')).toMatchObject({ status: 400, body: { error: 'only messages sent by this account can be edited' } });
    expect(await edit('FRESH1')).toMatchObject({ status: 200, body: { ok: true, message: 'Message edited' } });
    expect(commandOf(id, 'edit_message').payload).toMatchObject({ to: TO, targetMessageId: 'FRESH1', text: 'new' });
  });

  it('forward: 404 for an unknown message, a forward_message command for a stored one', async () => {
    const id = await account();
    await putMessage(table, id, {
      chatId: TO,
      type: 'text',
      text: 'hi',
      messageId: 'SRC1',
      from: TO,
      fromMe: false,
      timestamp: Date.now(),
    });
    const other = '15557654321@s.whatsapp.net';
    expect((await api.call('POST', `/accounts/${id}/message/forward`, { to: other, messageId: 'NOSUCH1' })).status).toBe(404);
    const { status, body } = await api.call('POST', `/accounts/${id}/message/forward`, { to: other, messageId: 'SRC1' });
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, messageId: commandOf(id, 'forward_message').payload.messageId });
    expect(commandOf(id, 'forward_message').payload).toMatchObject({ to: other, sourceMessageId: 'SRC1' });
  });

  it('read and presence: 200 and their commands; not connected: 500', async () => {
    const id = await account();
    expect(await api.call('POST', `/accounts/${id}/chats/${TO}/read`)).toMatchObject({
      status: 200,
      body: { ok: true, message: 'Chat marked read' },
    });
    expect(commandOf(id, 'mark_chat_read').payload.to).toBe(TO);
    expect(await api.call('POST', `/accounts/${id}/presence`, { chatId: TO, state: 'typing' })).toMatchObject({
      status: 200,
      body: { ok: true, message: 'Presence sent' },
    });
    expect(commandOf(id, 'send_presence').payload).toMatchObject({ to: TO, state: 'typing' });
    const offline = await account(false);
    expect((await api.call('POST', `/accounts/${offline}/presence`, { chatId: TO, state: 'typing' })).status).toBe(500);
  });
});

describe('POST /accounts/:id/message/send/sticker', () => {
  async function upload(accountId: string, fields: Record<string, string>, file?: { bytes: Buffer; name: string }) {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    if (file) form.append('sticker', new Blob([new Uint8Array(file.bytes)]), file.name);
    const response = await fetch(`${api.url}/accounts/${accountId}/message/send/sticker`, { method: 'POST', body: form });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('a PNG: 200 and a send_sticker command with its type', async () => {
    const id = await account();
    const { status, body } = await upload(id, { to: TO }, { bytes: fixtures.png, name: 's.png' });
    expect(status).toBe(200);
    const command = commandOf(id, 'send_sticker');
    expect(body).toEqual({ ok: true, messageId: command.payload.messageId });
    expect(command.payload).toMatchObject({ to: TO, mimetype: 'image/png' });
  });

  it('a PDF: 400 naming the accepted types; no file: 400', async () => {
    const id = await account();
    expect(await upload(id, { to: TO }, { bytes: fixtures.pdf, name: 's.pdf' })).toEqual({
      status: 400,
      body: { ok: false, error: 'sticker must be a WebP, PNG, JPG or GIF file' },
    });
    expect(await upload(id, { to: TO })).toEqual({ status: 400, body: { ok: false, error: 'sticker and to are required' } });
  });
});
