import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { startGateway, type Gateway } from './support/gateway.js';
import type { SandboxChat } from './support/sandbox-control.js';
import { PROFILE_PICTURE } from '../../sandbox/media-host.js';

const RECENT_MS = 90 * 86_400_000;
const jidOf = (phone: string) => `${phone}@s.whatsapp.net`;

interface ApiChat {
  chatId: string;
  name: string;
  unreadCount: number;
  lastMessageTime: number;
}
interface ApiMessage {
  messageId: string;
  chatId: string;
  fromMe: boolean;
  timestamp: number;
  historical?: boolean;
  text?: string;
}
interface HistoryEvent {
  event: string;
  accountId: string;
  syncType: string;
  progress: number;
  chats: number;
  messages: number;
}

/**
 * The phone's history imported per `settings.history` (docs/history.md), end to end: sandbox
 * phones with conversations link to accounts; chats with names and unread counts, messages in
 * order with `historical`, `history.sync` events and no `message` events, one copy per message
 * after a repeated sync and a live message, `none` and `full`.
 */
describe('history import through the sandbox and the API', { timeout: 180_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  const dan = { phone: '15550920009', pushName: 'Dan Smith' };
  const recent = { id: 'hrecent', phone: '15550920001' };
  const none = { id: 'hnone', phone: '15550920002' };
  const full = { id: 'hfull', phone: '15550920003' };
  const phoneChats = new Map<string, SandboxChat[]>();

  const historyEvents = (accountId: string) =>
    gw.webhooks.posts.map((p) => p.body as HistoryEvent).filter((b) => b.event === 'history.sync' && b.accountId === accountId);
  const messageEvents = (accountId: string) =>
    gw.webhooks.posts
      .map((p) => p.body as { event: string; accountId: string; messageId: string })
      .filter((b) => b.event === 'message' && b.accountId === accountId);
  const chatsOf = async (accountId: string) =>
    ((await api.call('GET', `/accounts/${accountId}/chats?limit=100`)).body.chats ?? []) as ApiChat[];
  const messagesOf = async (accountId: string, chatId: string) =>
    ((await api.call('GET', `/accounts/${accountId}/chats/${chatId}/messages?limit=100`)).body.messages ?? []) as ApiMessage[];
  /** The phone's messages the account should have: all, or the last 90 days'. */
  const expectedIds = (phone: string, all: boolean) =>
    (phoneChats.get(phone) ?? []).flatMap((c) =>
      c.messages.filter((m) => all || m.timestamp * 1000 >= Date.now() - RECENT_MS).map((m) => m.id),
    );

  const link = async (account: { id: string; phone: string }, history: 'none' | 'recent' | 'full' | undefined) => {
    const from = gw.logs.lines.length;
    // With the account: `full` is asked of the phone when the device registers, before the QR.
    expect((await api.call('POST', '/accounts', { id: account.id, ...(history ? { settings: { history } } : {}) })).status).toBe(201);
    await gw.linkAccount(account.id, account.phone, { logsFrom: from });
  };

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    expect((await api.call('POST', '/webhooks', { url: gw.webhooks.url, events: ['message', 'history.sync'] })).status).toBe(201);
    await gw.control.createPhone(dan.phone, dan.pushName);
    for (const account of [recent, none, full]) {
      await gw.control.createPhone(account.phone);
      await gw.control.seedHistory(account.phone, { chats: 5, messagesPerChat: 30, days: 365, media: 3 });
      // A conversation with a person on the network, kept by the phone before the link.
      await gw.control.sendFromPhone(dan.phone, account.phone, `hello ${account.id}`);
      await gw.control.sendFromPhone(account.phone, dan.phone, 'hello dan');
      phoneChats.set(account.phone, await gw.control.history(account.phone));
    }
    await link(recent, undefined);
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
  });

  it('by default imports RECENT: chats with the phone’s names, unread counts and times', async () => {
    const chats = await waitFor('the history chats', async () => {
      const listed = await chatsOf(recent.id);
      return listed.length >= 6 ? listed : undefined;
    });
    for (const chat of phoneChats.get(recent.phone) ?? []) {
      const listed = chats.find((c) => c.chatId === chat.jid);
      expect(listed, chat.jid).toBeDefined();
      expect(listed?.unreadCount).toBe(chat.unread);
      expect(listed?.lastMessageTime).toBe((chat.messages.at(-1)?.timestamp ?? 0) * 1000);
      // Saved name, else push name.
      expect(listed?.name).toBe(chat.name ?? chat.pushName);
    }
  });

  it('messages are stored like live ones, in order, with historical: true; RECENT only', async () => {
    const expected = expectedIds(recent.phone, false);
    await waitFor('every RECENT message', async () => {
      const synced = historyEvents(recent.id);
      return synced.some((e) => e.progress === 100) ? synced : undefined;
    });
    for (const chat of phoneChats.get(recent.phone) ?? []) {
      const listed = await messagesOf(recent.id, chat.jid);
      const want = chat.messages.filter((m) => expected.includes(m.id));
      expect(listed.every((m) => m.historical === true)).toBe(true);
      if (chat.jid === jidOf(dan.phone)) {
        // Both sent within a second: the order between them is the message id's.
        expect(new Set(listed.map((m) => m.messageId))).toEqual(new Set(want.map((m) => m.id)));
        continue;
      }
      // Newest first, as the API lists them.
      expect(listed.map((m) => m.messageId)).toEqual(want.map((m) => m.id).reverse());
      expect(listed.map((m) => m.fromMe)).toEqual(want.map((m) => m.fromMe).reverse());
    }
    const one = await api.call('GET', `/accounts/${recent.id}/messages/${expected[0]}`);
    expect(one.body.message).toMatchObject({ messageId: expected[0], historical: true });
  });

  it('posts one history.sync per chunk with counts, and no message event for history', async () => {
    const synced = historyEvents(recent.id);
    expect(synced.every((e) => e.syncType === 'recent')).toBe(true);
    expect(synced.reduce((sum, e) => sum + e.messages, 0)).toBe(expectedIds(recent.phone, false).length);
    const historyIds = new Set(expectedIds(recent.phone, true));
    expect(messageEvents(recent.id).filter((e) => historyIds.has(e.messageId))).toEqual([]);
  });

  it('one copy per message: a repeated sync and a live message already in the history change nothing', async () => {
    const live = await gw.control.sendFromPhone(dan.phone, recent.phone, 'live after the link');
    await waitFor('the live message event', () => messageEvents(recent.id).some((e) => e.messageId === live.id));
    const before = historyEvents(recent.id).length;
    await gw.control.pushHistory(recent.phone, 'recent');
    await waitFor('the repeated sync imported', () => (historyEvents(recent.id).length > before ? true : undefined));
    const withDan = await messagesOf(recent.id, jidOf(dan.phone));
    const ids = withDan.map((m) => m.messageId);
    expect(new Set(ids).size).toBe(ids.length);
    // The live row was not overwritten by its historical copy.
    expect(withDan.find((m) => m.messageId === live.id)?.historical).toBeUndefined();
    expect(messageEvents(recent.id).filter((e) => e.messageId === live.id)).toHaveLength(1);
  });

  it('on demand: the phone sends older messages of a chat, posted as history.sync on_demand', async () => {
    const chat = phoneChats.get(recent.phone)?.find((c) => c.name === undefined);
    if (!chat) throw new Error('no seeded chat');
    const before = await messagesOf(recent.id, chat.jid);
    const oldest = before.at(-1);
    const asked = await api.call('POST', `/accounts/${recent.id}/chats/${chat.jid}/history`, { count: 5 });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    expect(asked.body).toEqual({ ok: true, requested: 5 });
    const event = await waitFor('the on_demand history.sync', () => historyEvents(recent.id).find((e) => e.syncType === 'on_demand'));
    expect(event).toMatchObject({ progress: 100, chats: 1, messages: 5 });
    const after = await messagesOf(recent.id, chat.jid);
    const at = chat.messages.findIndex((m) => m.id === oldest?.messageId);
    expect(at).toBeGreaterThanOrEqual(5);
    expect(after.slice(before.length).map((m) => m.messageId)).toEqual(
      chat.messages
        .slice(at - 5, at)
        .map((m) => m.id)
        .reverse(),
    );
    expect(after.every((m) => m.historical)).toBe(true);
  });

  it('on demand: count from 1 to 50, a known chat and account, else the API errors', async () => {
    const chatId = phoneChats.get(recent.phone)?.[0]?.jid ?? '';
    const post = (accountId: string, chat: string, body?: unknown) =>
      api.call('POST', `/accounts/${accountId}/chats/${chat}/history`, body);
    for (const count of [0, 51, 2.5, 'five']) {
      const refused = await post(recent.id, chatId, { count });
      expect(refused.status, String(count)).toBe(400);
      expect(refused.body).toEqual({ ok: false, error: 'count must be an integer from 1 to 50' });
    }
    const noBody = await post(recent.id, chatId);
    expect(noBody.status).toBe(400);
    expect(noBody.body).toMatchObject({ ok: false });
    const badChat = await post(recent.id, 'not-a-jid', { count: 5 });
    expect(badChat.status).toBe(400);
    expect(badChat.body).toMatchObject({ ok: false });
    const unknownChat = await post(recent.id, '15550920999@s.whatsapp.net', { count: 5 });
    expect(unknownChat.status).toBe(404);
    expect(unknownChat.body).toEqual({ ok: false, error: 'Chat not found' });
    const unknownAccount = await post('nosuchaccount', chatId, { count: 5 });
    expect(unknownAccount.status).toBe(404);
    expect(unknownAccount.body).toEqual({ ok: false, error: 'Account not found' });
  });

  it('media of history is fetched from WhatsApp on its first download, then served from the store', async () => {
    const chat = phoneChats.get(recent.phone)?.[0];
    const imageId = chat?.messages.at(-1)?.id ?? '';
    const before = await api.call('GET', `/accounts/${recent.id}/messages/${imageId}`);
    expect(before.body.message).toMatchObject({ type: 'image', hasMedia: true, historical: true });
    expect(before.body.message).not.toHaveProperty('mediaId');
    const first = await fetch(`${api.url}/accounts/${recent.id}/messages/${imageId}/media`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.compare(Buffer.from(await first.arrayBuffer()), PROFILE_PICTURE)).toBe(0);
    const after = await api.call('GET', `/accounts/${recent.id}/messages/${imageId}`);
    expect(after.body.message).toMatchObject({ mediaId: expect.any(String) });
  });

  it('media WhatsApp no longer has: the phone uploads it again (media retry), else 404 Media no longer available', async () => {
    const [, kept, lost] = phoneChats.get(recent.phone) ?? [];
    const keptId = kept?.messages.at(-1)?.id ?? '';
    const lostId = lost?.messages.at(-1)?.id ?? '';
    await gw.control.expireMedia(recent.phone, keptId, true);
    await gw.control.expireMedia(recent.phone, lostId, false);
    const again = await fetch(`${api.url}/accounts/${recent.id}/messages/${keptId}/media`);
    expect(again.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await again.arrayBuffer()), PROFILE_PICTURE)).toBe(0);
    const gone = await api.call('GET', `/accounts/${recent.id}/messages/${lostId}/media`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ ok: false, error: 'Media no longer available' });
  });

  it('history: none imports nothing', async () => {
    const from = gw.logs.lines.length;
    await link(none, 'none');
    await waitFor('the RECENT sync refused', () =>
      gw.logs.lines.slice(from).some((l) => l.msg === 'history sync not imported (settings.history)' && l.accountId === none.id),
    );
    expect(await chatsOf(none.id)).toEqual([]);
    expect(historyEvents(none.id)).toEqual([]);
  });

  it('history: full set before the link imports RECENT and FULL: every message once', async () => {
    await link(full, 'full');
    await waitFor('both syncs complete', () => {
      const synced = historyEvents(full.id);
      return ['recent', 'full'].every((type) => synced.some((e) => e.syncType === type && e.progress === 100)) ? true : undefined;
    });
    const expected = expectedIds(full.phone, true);
    const stored = (await Promise.all((phoneChats.get(full.phone) ?? []).map((c) => messagesOf(full.id, c.jid)))).flat();
    expect(stored.map((m) => m.messageId).sort()).toEqual([...expected].sort());
  });
});
