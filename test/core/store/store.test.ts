import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError, NotFoundError } from '../../../core/errors.js';
import { accountKey } from '../../../core/keys.js';
import { getBuffer, listKeys, mediaStoreOf, putStream, type MediaStore } from '../../../core/media-store.js';
import { createAccount, getAccount, listAccounts, updateAccountStatus } from '../../../core/store/accounts.js';
import { deleteAccountData } from '../../../core/store/account-deletion.js';
import { clearAuthState, readCreds, readSignalKeys, writeCreds, writeSignalKeys } from '../../../core/store/auth-state.js';
import { applyChatChange, findChat, listChats, updateChat } from '../../../core/store/chats.js';
import { findMedia, putMedia } from '../../../core/store/media.js';
import {
  addReaction,
  findMessage,
  listMessages,
  markMessageRevoked,
  putMessage,
  putMessageIfAbsent,
} from '../../../core/store/messages.js';
import { claimIdempotencyKey, findIdempotencyRecord } from '../../../core/store/idempotency.js';
import {
  claimOutbound,
  failPendingOutbound,
  findOutbound,
  markOutboundFailed,
  markOutboundSent,
  markOutboundUnknown,
  putPendingOutbound,
} from '../../../core/store/outbound.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { listWebhooks, registerWebhook } from '../../../core/store/webhooks.js';
import type { Message } from '../../../core/schemas/message.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

let stack: TestStack;
let table: Table;
let media: MediaStore;
let counter = 0;
/** Each case uses its own account id so cases share no state. */
const uniqueId = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

beforeAll(async () => {
  stack = await startTestStack();
  table = tableOf(stack.config, stack.clients);
  media = mediaStoreOf(stack.config, stack.clients);
});
afterAll(async () => {
  await stack?.stop();
});

const chatJid = '15550001111@s.whatsapp.net';
const textMessage = (messageId: string, timestamp: number, chatId = chatJid): Message => ({
  messageId,
  from: chatId,
  chatId,
  timestamp,
  type: 'text',
  fromMe: false,
  text: `hello ${messageId}`,
});

describe('accounts', () => {
  it('creates, gets, and refuses a second create with the same id', async () => {
    const id = uniqueId('acc');
    const created = await createAccount(table, { id, collectionName: `auth_${id}`, status: 'connecting' });
    expect(created).toMatchObject({ _id: id, status: 'connecting', currentStatus: 'connecting', hasQR: false });
    expect(await getAccount(table, id)).toEqual(created);
    await expect(createAccount(table, { id, collectionName: 'x', status: 'connecting' })).rejects.toThrow(AlreadyExistsError);
  });

  it('lists accounts oldest first and reports an unknown one as not found', async () => {
    const first = uniqueId('list');
    const second = uniqueId('list');
    await createAccount(table, { id: first, collectionName: 'c1', status: 'connecting' }, new Date(1_000));
    await createAccount(table, { id: second, collectionName: 'c2', status: 'connecting' }, new Date(2_000));
    const ids = (await listAccounts(table)).map((a) => a._id);
    expect(ids.indexOf(first)).toBeLessThan(ids.indexOf(second));
    await expect(getAccount(table, uniqueId('none'))).rejects.toThrow(NotFoundError);
  });

  it('updates status and hasQR but never recreates a deleted account', async () => {
    const id = uniqueId('st');
    await createAccount(table, { id, collectionName: 'c', status: 'connecting' });
    await updateAccountStatus(table, id, { status: 'connecting', hasQR: true });
    expect(await getAccount(table, id)).toMatchObject({ hasQR: true, currentStatus: 'connecting' });
    await updateAccountStatus(table, id, { status: 'connected' });
    expect(await getAccount(table, id)).toMatchObject({ status: 'connected', currentStatus: 'connected', hasQR: false });
    await expect(updateAccountStatus(table, uniqueId('gone'), { status: 'connected' })).rejects.toThrow(NotFoundError);
  });
});

describe('chats and messages', () => {
  it('lists messages of a chat newest first with limit and skip', async () => {
    const id = uniqueId('msg');
    for (let i = 0; i < 7; i++) await putMessage(table, id, textMessage(`M${i}`, 1_700_000_000_000 + i));
    await putMessage(table, id, textMessage('OTHER', 1_800_000_000_000, '15550002222@s.whatsapp.net'));
    const all = await listMessages(table, id, chatJid, { limit: 50, skip: 0 });
    expect(all.map((m) => m.messageId)).toEqual(['M6', 'M5', 'M4', 'M3', 'M2', 'M1', 'M0']);
    const page = await listMessages(table, id, chatJid, { limit: 2, skip: 3 });
    expect(page.map((m) => m.messageId)).toEqual(['M3', 'M2']);
    expect(await findMessage(table, id, 'M4')).toMatchObject({ chatId: chatJid, text: 'hello M4' });
  });

  it('stores a message only if absent: a second write of the same id changes nothing', async () => {
    const id = uniqueId('once');
    expect(await putMessageIfAbsent(table, id, textMessage('O1', 1))).toBe(true);
    expect(await putMessageIfAbsent(table, id, { ...textMessage('O1', 1), text: 'replaced' })).toBe(false);
    expect((await findMessage(table, id, 'O1'))?.text).toBe('hello O1');
    expect(await listMessages(table, id, chatJid, { limit: 50, skip: 0 })).toHaveLength(1);
  });

  it('records reactions and revocations on stored messages only', async () => {
    const id = uniqueId('react');
    await putMessage(table, id, textMessage('R1', 1));
    expect(await addReaction(table, id, 'R1', { from: chatJid, emoji: '👍', timestamp: 2 })).toBe(true);
    expect(await addReaction(table, id, 'NOPE', { from: chatJid, emoji: '👍', timestamp: 2 })).toBe(false);
    expect(await markMessageRevoked(table, id, 'R1')).toBe(true);
    const stored = await findMessage(table, id, 'R1');
    expect(stored?.reactions).toHaveLength(1);
    expect(stored?.revoked).toBe(true);
    expect(stored?.text).toBeUndefined();
  });

  it('orders chats by last activity, counts unread, and ignores late older messages for order', async () => {
    const id = uniqueId('chat');
    const a = '15550000001@s.whatsapp.net';
    const b = '123456789-987654321@g.us';
    await updateChat(table, id, a, { at: 100, name: 'Alice', unread: 1 });
    await updateChat(table, id, b, { at: 200, name: 'Group', unread: 1 });
    await updateChat(table, id, a, { at: 300, unread: 1 });
    // Older than the chat's last message: the order stays, the count and the name change.
    expect(await updateChat(table, id, b, { at: 150, unread: 1, name: 'Team' })).toEqual({
      chatId: b,
      name: 'Team',
      unreadCount: 2,
      lastMessageTime: 200,
    });
    const chats = await listChats(table, id, { limit: 50, skip: 0 });
    expect(chats).toEqual([
      { chatId: a, name: 'Alice', unreadCount: 2, lastMessageTime: 300 },
      { chatId: b, name: 'Team', unreadCount: 2, lastMessageTime: 200 },
    ]);
    expect(await listChats(table, id, { limit: 1, skip: 1 })).toEqual([chats[1]]);
  });

  it('a change without a time changes only a chat that exists; a new chat is named by its number', async () => {
    const id = uniqueId('retract');
    const a = '15550000002@s.whatsapp.net';
    await updateChat(table, id, a, { at: 100, unread: 1 });
    await updateChat(table, id, a, { unread: -1 });
    await updateChat(table, id, a, { at: 200, unread: 1 });
    await updateChat(table, id, a, { at: 200, unread: 1 });
    expect(await updateChat(table, id, a, { unread: -1 })).toEqual({
      chatId: a,
      name: '+15550000002',
      unreadCount: 1,
      lastMessageTime: 200,
    });
    expect(await findChat(table, id, a)).toMatchObject({ unreadCount: 1, lastMessageTime: 200 });
    expect(await updateChat(table, id, '15550000003@s.whatsapp.net', { unread: -1, name: 'x' })).toBeUndefined();
    expect(await findChat(table, id, '15550000003@s.whatsapp.net')).toBeUndefined();
  });

  it('applyChatChange computes what updateChat writes', () => {
    const a = '15550000004@s.whatsapp.net';
    expect(applyChatChange(undefined, a, { unread: 1 })).toBeUndefined();
    const created = applyChatChange(undefined, a, { at: 100, unread: 1 });
    expect(created).toEqual({ chatId: a, name: '+15550000004', unreadCount: 1, lastMessageTime: 100 });
    expect(applyChatChange(created, a, { at: 50, unread: 2, name: 'Ann' })).toEqual({
      chatId: a,
      name: 'Ann',
      unreadCount: 3,
      lastMessageTime: 100,
    });
  });
});

describe('outbound records', () => {
  const later = () => Date.now() + 60_000;

  it('pending -> sending (claim) -> sent or failed; nothing is settled without a claim or a record', async () => {
    const id = uniqueId('out');
    await putPendingOutbound(table, id, { messageId: 'S1', commandId: 'c1' }, later());
    await putPendingOutbound(table, id, { messageId: 'S2', commandId: 'c2' }, later());
    expect(await findOutbound(table, id, 'S1')).toMatchObject({ status: 'pending' });
    expect(await markOutboundSent(table, id, 'S1', 42)).toBe(false);
    expect(await claimOutbound(table, id, 'S1')).toBe(true);
    expect(await claimOutbound(table, id, 'S1')).toBe(false);
    expect(await markOutboundSent(table, id, 'S1', 42)).toBe(true);
    expect(await claimOutbound(table, id, 'S2')).toBe(true);
    expect(await markOutboundFailed(table, id, 'S2', 'not on WhatsApp')).toBe(true);
    expect(await markOutboundSent(table, id, 'S3')).toBe(false);
    expect(await claimOutbound(table, id, 'S3')).toBe(false);
    expect(await findOutbound(table, id, 'S1')).toMatchObject({ status: 'sent', sentAt: 42 });
    expect(await findOutbound(table, id, 'S2')).toMatchObject({ status: 'failed', reason: 'not on WhatsApp' });
  });

  it('the claim and failing a pending send exclude each other; no claim at or after the deadline', async () => {
    const id = uniqueId('out');
    await putPendingOutbound(table, id, { messageId: 'F1', commandId: 'c1' }, later());
    expect(await failPendingOutbound(table, id, 'F1', 'timed out')).toBe(true);
    expect(await claimOutbound(table, id, 'F1')).toBe(false);

    await putPendingOutbound(table, id, { messageId: 'F2', commandId: 'c2' }, later());
    expect(await claimOutbound(table, id, 'F2')).toBe(true);
    expect(await failPendingOutbound(table, id, 'F2', 'timed out')).toBe(false);
    expect(await findOutbound(table, id, 'F2')).toMatchObject({ status: 'sending' });

    const deadline = Date.now() + 60_000;
    await putPendingOutbound(table, id, { messageId: 'F3', commandId: 'c3' }, deadline);
    expect(await claimOutbound(table, id, 'F3', deadline)).toBe(false);
    expect(await claimOutbound(table, id, 'F3', deadline - 1)).toBe(true);
  });

  it('a send left sending becomes unknown; a late report of sent still wins', async () => {
    const id = uniqueId('out');
    await putPendingOutbound(table, id, { messageId: 'U1', commandId: 'c1' }, later());
    expect(await markOutboundUnknown(table, id, 'U1', 'stopped')).toBe(false);
    await claimOutbound(table, id, 'U1');
    expect(await markOutboundUnknown(table, id, 'U1', 'stopped')).toBe(true);
    expect(await findOutbound(table, id, 'U1')).toMatchObject({ status: 'unknown', reason: 'stopped' });
    expect(await markOutboundSent(table, id, 'U1', 7)).toBe(true);
    expect(await findOutbound(table, id, 'U1')).toMatchObject({ status: 'sent', sentAt: 7 });
  });
});

describe('idempotency keys', () => {
  it('the first claim of a key wins; an expired one can be taken again; accounts are separate', async () => {
    const id = uniqueId('idem');
    const other = uniqueId('idem');
    const now = Date.now();
    expect(await claimIdempotencyKey(table, id, 'k 1', { fingerprint: 'f1', messageId: 'M1' }, now)).toBe(true);
    expect(await claimIdempotencyKey(table, id, 'k 1', { fingerprint: 'f2', messageId: 'M2' }, now)).toBe(false);
    expect(await claimIdempotencyKey(table, other, 'k 1', { fingerprint: 'f3', messageId: 'M3' }, now)).toBe(true);
    expect(await findIdempotencyRecord(table, id, 'k 1', now)).toMatchObject({ fingerprint: 'f1', messageId: 'M1' });
    expect(await findIdempotencyRecord(table, other, 'k 1', now)).toMatchObject({ messageId: 'M3' });

    const dayLater = now + 24 * 60 * 60 * 1000 + 2_000;
    expect(await findIdempotencyRecord(table, id, 'k 1', dayLater)).toBeUndefined();
    expect(await claimIdempotencyKey(table, id, 'k 1', { fingerprint: 'f4', messageId: 'M4' }, dayLater)).toBe(true);
    expect(await findIdempotencyRecord(table, id, 'k 1', dayLater)).toMatchObject({ fingerprint: 'f4', messageId: 'M4' });
  });
});

describe('webhooks', () => {
  it('reports created only for a new URL', async () => {
    const url = `https://example.com/${uniqueId('hook')}`;
    expect((await registerWebhook(table, url)).created).toBe(true);
    expect((await registerWebhook(table, url)).created).toBe(false);
    expect((await listWebhooks(table)).map((w) => w.url)).toContain(url);
  });
});

describe('auth state', () => {
  it('stores creds and more keys than one batch holds, reads them back, deletes some, clears all', async () => {
    const collection = `auth_${uniqueId('keys')}`;
    expect(await readCreds(table, collection)).toBeUndefined();
    await writeCreds(table, collection, '{"me":1}');
    expect(await readCreds(table, collection)).toBe('{"me":1}');

    const ids = Array.from({ length: 130 }, (_, i) => String(i));
    await writeSignalKeys(
      table,
      collection,
      ids.map((id) => ({ type: 'pre-key', id, value: `v${id}` })),
    );
    await writeSignalKeys(table, collection, [{ type: 'session', id: '1.0', value: 's' }]);
    const read = await readSignalKeys(table, collection, 'pre-key', [...ids, 'missing']);
    expect(Object.keys(read)).toHaveLength(130);
    expect(read['129']).toBe('v129');
    expect(read.missing).toBeUndefined();

    await writeSignalKeys(table, collection, [
      { type: 'pre-key', id: '5', value: null },
      { type: 'pre-key', id: '6', value: 'first' },
      { type: 'pre-key', id: '6', value: 'last' },
    ]);
    const after = await readSignalKeys(table, collection, 'pre-key', ['5', '6']);
    expect(after).toEqual({ '6': 'last' });
    expect(await readSignalKeys(table, collection, 'session', ['1.0'])).toEqual({ '1.0': 's' });

    expect(await clearAuthState(table, collection)).toBe(131);
    expect(await readCreds(table, collection)).toBeUndefined();
  });
});

describe('account deletion', () => {
  it('removes every item of the account, its auth state and its S3 objects, and nothing else', async () => {
    const id = uniqueId('del');
    const other = uniqueId('keep');
    const collection = `auth_${id}`;
    await createAccount(table, { id, collectionName: collection, status: 'connecting' });
    await createAccount(table, { id: other, collectionName: `auth_${other}`, status: 'connecting' });
    for (let i = 0; i < 30; i++) await putMessage(table, id, textMessage(`D${i}`, i));
    await putMessage(table, other, textMessage('K1', 1));
    await updateChat(table, id, chatJid, { at: 1, unread: 1 });
    await putPendingOutbound(table, id, { messageId: 'O1', commandId: 'c' }, Date.now());
    await claimIdempotencyKey(table, id, 'key', { fingerprint: 'f', messageId: 'O1' });
    await putMedia(table, id, { mediaId: 'm1', messageId: 'D1', s3Key: `accounts/${id}/media/m1`, mimetype: 'image/png', size: 3 });
    await putStream(media, `accounts/${id}/media/m1`, Buffer.from('abc'), { contentType: 'image/png' });
    await putStream(media, `accounts/${id}/uploads/u1`, Buffer.from('def'), { contentType: 'image/png' });
    await putStream(media, `accounts/${other}/media/m2`, Buffer.from('ghi'), { contentType: 'image/png' });
    await writeCreds(table, collection, '{}');
    await writeSignalKeys(table, collection, [{ type: 'pre-key', id: '1', value: 'k' }]);

    const counts = await deleteAccountData(table, media, id, collection);
    expect(counts).toEqual({ items: 30 + 1 + 1 + 1 + 1 + 1, authItems: 2, objects: 2 });

    const gone = await stack.clients.dynamo.send(new GetCommand({ TableName: table.name, Key: accountKey(id) }));
    expect(gone.Item).toBeUndefined();
    expect(await listMessages(table, id, chatJid, { limit: 100, skip: 0 })).toEqual([]);
    expect(await listChats(table, id, { limit: 100, skip: 0 })).toEqual([]);
    expect(await findMedia(table, id, 'm1')).toBeUndefined();
    expect(await findIdempotencyRecord(table, id, 'key')).toBeUndefined();
    expect(await readCreds(table, collection)).toBeUndefined();
    expect(await listKeys(media, `accounts/${id}/`)).toEqual([]);

    expect(await getAccount(table, other)).toMatchObject({ _id: other });
    expect(await findMessage(table, other, 'K1')).toBeDefined();
    expect((await getBuffer(media, `accounts/${other}/media/m2`))?.toString()).toBe('ghi');
  });
});
