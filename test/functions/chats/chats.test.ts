import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateChat } from '../../../core/store/chats.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { startTestApi } from '../../support/test-api.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

const ALICE = '15550000001@s.whatsapp.net';
const GROUP = '15550000001-1600000000@g.us';

let stack: TestStack;
let api: Awaited<ReturnType<typeof startTestApi>>;
let table: Table;
let accountId: string;

beforeAll(async () => {
  stack = await startTestStack();
  table = tableOf(stack.config, stack.clients);
  api = await startTestApi(stack);
  accountId = `chats${Date.now().toString(36)}`;
  await api.call('POST', '/accounts', { id: accountId });
  // 120 chats (more than one page of the maximum) and 130 messages in Alice's chat.
  for (let i = 0; i < 120; i++) {
    await updateChat(table, accountId, `1555100${String(i).padStart(4, '0')}@s.whatsapp.net`, {
      at: 1_700_000_000_000 + i,
      name: `Contact ${i}`,
      unread: 1,
    });
  }
  await updateChat(table, accountId, GROUP, { at: 1_800_000_000_000, name: 'Team' });
  for (let i = 0; i < 130; i++) {
    await putMessage(table, accountId, {
      messageId: `ALICE${String(i).padStart(4, '0')}`,
      from: ALICE,
      chatId: ALICE,
      timestamp: 1_700_000_000_000 + i * 1000,
      type: 'text',
      fromMe: i % 2 === 0,
      text: `message ${i}`,
    });
  }
  await putMessage(table, accountId, {
    messageId: 'GROUPIMG',
    from: ALICE,
    chatId: GROUP,
    timestamp: 1_800_000_000_000,
    type: 'image',
    fromMe: false,
    hasMedia: true,
    mediaId: 'abc123',
    caption: 'a photo',
    mimetype: 'image/jpeg',
  });
});
afterAll(async () => {
  await api?.close();
  await stack?.stop();
});

describe('GET /accounts/:id/chats', () => {
  it('newest first, default 50, with the Chat fields', async () => {
    const { status, body } = await api.call('GET', `/accounts/${accountId}/chats`);
    expect(status).toBe(200);
    const chats = body.chats as Array<Record<string, unknown>>;
    expect(chats).toHaveLength(50);
    expect(chats[0]).toEqual({ chatId: GROUP, name: 'Team', unreadCount: 0, lastMessageTime: 1_800_000_000_000 });
    expect(chats[1]).toMatchObject({ chatId: '15551000119@s.whatsapp.net', name: 'Contact 119', unreadCount: 1 });
  });

  it('limit and skip page through the list; limit up to 100', async () => {
    const page = await api.call('GET', `/accounts/${accountId}/chats?limit=2&skip=1`);
    expect((page.body.chats as Array<{ chatId: string }>).map((c) => c.chatId)).toEqual([
      '15551000119@s.whatsapp.net',
      '15551000118@s.whatsapp.net',
    ]);
    expect((await api.call('GET', `/accounts/${accountId}/chats?limit=100`)).body.chats).toHaveLength(100);
    expect((await api.call('GET', `/accounts/${accountId}/chats?limit=100&skip=100`)).body.chats).toHaveLength(21);
  });

  it('out-of-range or non-numeric paging: 400', async () => {
    for (const query of ['limit=101', 'limit=0', 'limit=abc', 'skip=-1', 'skip=1.5', 'skip=10001']) {
      const { status, body } = await api.call('GET', `/accounts/${accountId}/chats?${query}`);
      expect({ query, status, ok: body.ok }).toEqual({ query, status: 400, ok: false });
      expect(String(body.error)).toMatch(/^(limit|skip) must be an integer from/);
    }
  });
});

describe('GET /accounts/:id/chats/:chatId/messages', () => {
  it('newest first, default 50, maximum 100, skip', async () => {
    const base = `/accounts/${accountId}/chats/${ALICE}/messages`;
    const first = await api.call('GET', base);
    expect(first.status).toBe(200);
    const messages = first.body.messages as Array<Record<string, unknown>>;
    expect(messages).toHaveLength(50);
    expect(messages[0]).toMatchObject({
      messageId: 'ALICE0129',
      from: ALICE,
      timestamp: 1_700_000_129_000,
      text: 'message 129',
      type: 'text',
      fromMe: false,
    });
    expect((await api.call('GET', `${base}?limit=100`)).body.messages).toHaveLength(100);
    expect((await api.call('GET', `${base}?limit=101`)).status).toBe(400);
    const skipped = await api.call('GET', `${base}?limit=3&skip=128`);
    expect((skipped.body.messages as Array<{ messageId: string }>).map((m) => m.messageId)).toEqual(['ALICE0001', 'ALICE0000']);
  });

  it('a URL-encoded JID works the same; a malformed chatId: 400', async () => {
    const encoded = await api.call('GET', `/accounts/${accountId}/chats/${encodeURIComponent(GROUP)}/messages`);
    expect(encoded.body.messages).toEqual([
      expect.objectContaining({ messageId: 'GROUPIMG', hasMedia: true, mediaId: 'abc123', caption: 'a photo', type: 'image' }),
    ]);
    expect(await api.call('GET', `/accounts/${accountId}/chats/not-a-jid/messages`)).toMatchObject({
      status: 400,
      body: { ok: false, error: 'chatId must be a valid JID' },
    });
  });

  it('a chat without messages: 200 with an empty list', async () => {
    const { status, body } = await api.call('GET', `/accounts/${accountId}/chats/15559998888@s.whatsapp.net/messages`);
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, messages: [] });
  });
});

describe('GET /accounts/:id/messages/:messageId', () => {
  it('the message with chatId; unknown: 404 Message not found', async () => {
    expect(await api.call('GET', `/accounts/${accountId}/messages/GROUPIMG`)).toMatchObject({
      status: 200,
      body: { ok: true, message: { messageId: 'GROUPIMG', chatId: GROUP, from: ALICE } },
    });
    expect(await api.call('GET', `/accounts/${accountId}/messages/NOPE`)).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Message not found' },
    });
    expect((await api.call('GET', `/accounts/${accountId}/messages/bad-id!`)).status).toBe(404);
  });
});
