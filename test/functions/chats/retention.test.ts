import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClients, destroyClients, type AwsClients } from '../../../core/aws.js';
import { chatKey, mediaKey, messageKey } from '../../../core/keys.js';
import type { Message } from '../../../core/schemas/message.js';
import { chatWriterOf } from '../../../core/store/chat-writer.js';
import { updateChat } from '../../../core/store/chats.js';
import { putMedia } from '../../../core/store/media.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { countRequests } from '../../support/counted-table.js';
import { startTestApi, type TestApi } from '../../support/test-api.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

const DAY = 86_400_000;
const ALICE = '15550000001@s.whatsapp.net';
const BOB = '15550000002@s.whatsapp.net';
const CAROL = '15550000003@s.whatsapp.net';

let stack: TestStack;
let clients: AwsClients;
let counts: Map<string, number>;
let api: TestApi;
/** The table as the stack's runtimes see it: messages kept 30 days, media 7. */
let table: Table;
let accountId: string;
const now = Date.now();

const text = (messageId: string, chatId: string, timestamp: number): Message => ({
  messageId,
  from: chatId,
  chatId,
  timestamp,
  type: 'text',
  fromMe: false,
  text: messageId,
});
const raw = async (key: { pk: string; sk: string }) =>
  (await stack.clients.dynamo.send(new GetCommand({ TableName: stack.config.TABLE_NAME, Key: key }))).Item;
/** What `work` answers, and the DynamoDB requests it sent through the API's clients, by command name. */
async function counted<T>(work: () => Promise<T>): Promise<{ result: T; requests: Record<string, number> }> {
  const before = new Map(counts);
  const result = await work();
  const requests = Object.fromEntries([...counts].map(([name, n]) => [name, n - (before.get(name) ?? 0)]).filter(([, n]) => n !== 0));
  return { result, requests };
}

beforeAll(async () => {
  stack = await startTestStack({ overrides: { MESSAGE_RETENTION_DAYS: '30', MEDIA_RETENTION_DAYS: '7' } });
  // Clients of the API's own, counted from their first request (test/support/counted-table.ts).
  clients = createClients(stack.config);
  counts = countRequests(clients);
  api = await startTestApi({ config: stack.config, clients });
  table = tableOf(stack.config, stack.clients);
  accountId = `keep${now.toString(36)}`;
  await api.call('POST', '/accounts', { id: accountId });
});
afterAll(async () => {
  await api?.close();
  destroyClients(clients);
  await stack?.stop();
});

describe('retention (MESSAGE_RETENTION_DAYS=30, MEDIA_RETENTION_DAYS=7)', () => {
  it('rows carry their TTL: a message 30 days after its time, its chat 30 days after its last message, a media row 7 days after it was stored', async () => {
    const at = now - DAY;
    await chatWriterOf(table).putMessageIfAbsent(accountId, text('TTL1', ALICE, at), undefined, { at, unread: 1 });
    await putMedia(table, accountId, {
      mediaId: 'ttlmedia',
      messageId: 'TTL1',
      s3Key: 'accounts/x/media/ttlmedia',
      mimetype: 'image/png',
      size: 1,
    });
    const expected = (time: number, days: number) => Math.ceil((time + days * DAY) / 1000);
    expect((await raw(messageKey(accountId, 'TTL1')))?.expiresAt).toBe(expected(at, 30));
    expect((await raw(chatKey(accountId, ALICE)))?.expiresAt).toBe(expected(at, 30));
    const media = (await raw(mediaKey(accountId, 'ttlmedia')))?.expiresAt as number;
    expect(media).toBeGreaterThanOrEqual(expected(now, 7));
    expect(media).toBeLessThanOrEqual(expected(Date.now(), 7));
  });

  it('without a retention nothing carries a TTL', async () => {
    const keepAll = tableOf({ TABLE_NAME: stack.config.TABLE_NAME }, stack.clients);
    await putMessage(keepAll, accountId, text('FOREVER', CAROL, now - 400 * DAY));
    expect(await raw(messageKey(accountId, 'FOREVER'))).not.toHaveProperty('expiresAt');
  });

  it('lists and gets leave out rows whose TTL passed before DynamoDB deleted them, each list still one Query', async () => {
    // Bob: three messages kept, two past 30 days, and one written under an earlier 1-day
    // retention (within 30 days, its own TTL passed): only the filter can leave that one out.
    for (const [id, age] of [
      ['KEPT1', 1],
      ['KEPT2', 2],
      ['KEPT3', 3],
      ['OLD1', 31],
      ['OLD2', 40],
    ] as const) {
      await putMessage(table, accountId, text(id, BOB, now - age * DAY));
    }
    const shortLived = tableOf({ ...stack.config, MESSAGE_RETENTION_DAYS: 1 }, stack.clients);
    await putMessage(shortLived, accountId, text('SHORT', BOB, now - 2.5 * DAY));
    await updateChat(table, accountId, BOB, { at: now - DAY, unread: 3 });
    // Carol's last message is 40 days old: her chat expired with it.
    await updateChat(table, accountId, CAROL, { at: now - 40 * DAY, unread: 2 });

    const messages = await counted(() => api.call('GET', `/accounts/${accountId}/chats/${encodeURIComponent(BOB)}/messages?limit=10`));
    expect(messages.result.status).toBe(200);
    expect((messages.result.body.messages as Message[]).map((m) => m.messageId)).toEqual(['KEPT1', 'KEPT2', 'KEPT3']);
    expect(messages.requests).toEqual({ QueryCommand: 1 });

    const chats = await counted(() => api.call('GET', `/accounts/${accountId}/chats`));
    const chatIds = (chats.result.body.chats as Array<{ chatId: string }>).map((c) => c.chatId);
    expect(chatIds).toContain(BOB);
    expect(chatIds).not.toContain(CAROL);
    expect(chats.requests).toEqual({ QueryCommand: 1 });

    expect((await api.call('GET', `/accounts/${accountId}/messages/OLD1`)).status).toBe(404);
    expect((await api.call('GET', `/accounts/${accountId}/messages/SHORT`)).status).toBe(404);
    expect((await api.call('GET', `/accounts/${accountId}/messages/KEPT1`)).status).toBe(200);
  });

  it('a message whose media expired answers 404 Media expired', async () => {
    await putMessage(table, accountId, { ...text('PHOTO', ALICE, now - DAY), type: 'image', hasMedia: true, mediaId: 'gonemedia' });
    // The row as DynamoDB may still hold it a day after its TTL.
    await stack.clients.dynamo.send(
      new PutCommand({
        TableName: stack.config.TABLE_NAME,
        Item: {
          ...mediaKey(accountId, 'gonemedia'),
          mediaId: 'gonemedia',
          messageId: 'PHOTO',
          s3Key: `accounts/${accountId}/media/gonemedia`,
          mimetype: 'image/png',
          size: 1,
          expiresAt: Math.floor(now / 1000) - 60,
        },
      }),
    );
    const answer = await api.call('GET', `/accounts/${accountId}/messages/PHOTO/media`);
    expect(answer.status).toBe(404);
    expect(JSON.stringify(answer.body)).toContain('Media expired');
  });

  it('a chat that expired with its messages starts again from zero when a new message comes, through either write path', async () => {
    const dan = '15550000004@s.whatsapp.net';
    const erin = '15550000005@s.whatsapp.net';
    for (const chatId of [dan, erin]) await updateChat(table, accountId, chatId, { at: now - 45 * DAY, unread: 7 });
    // A chat not known to the writer: one UpdateItem, refused on the expired item, then a fresh one.
    expect(await updateChat(table, accountId, dan, { at: now, unread: 1 })).toMatchObject({ unreadCount: 1, lastMessageTime: now });
    // A chat read into the writer's memory first (a batch reads what it does not know).
    const writer = chatWriterOf(table);
    await Promise.all([
      writer.putMessageIfAbsent(accountId, text('ERIN1', erin, now), undefined, { at: now, unread: 1 }),
      writer.putMessageIfAbsent(accountId, text('ERIN2', erin, now + 1), undefined, { at: now + 1, unread: 1 }),
    ]);
    const chats = (await api.call('GET', `/accounts/${accountId}/chats`)).body.chats as Array<{ chatId: string; unreadCount: number }>;
    expect(chats.find((c) => c.chatId === dan)?.unreadCount).toBe(1);
    expect(chats.find((c) => c.chatId === erin)?.unreadCount).toBe(2);
  });
});
