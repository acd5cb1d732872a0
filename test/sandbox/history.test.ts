import { downloadMediaMessage, proto, type BaileysEventMap, type WAMessage } from '@whiskeysockets/baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { sandboxMediaDownloadOptions } from '../../sandbox/client.js';
import { PROFILE_PICTURE } from '../../sandbox/media-host.js';
import { RECENT_DAYS } from '../../sandbox/phone/history.js';
import { waitFor } from '../support/wait.js';
import { createPhone, linkClient, type SandboxClient } from './support/sandbox-client.js';

const { HistorySyncType } = proto.HistorySync;
type HistorySet = BaileysEventMap['messaging-history.set'];

const SEEDED_CHATS = 12;
const PER_CHAT = 150;
const ALICE = '15550031001';
const BOB = '15550031002';

interface PhoneChat {
  jid: string;
  name?: string;
  pushName?: string;
  unread: number;
  messages: Array<{ id: string; fromMe: boolean; timestamp: number }>;
}

describe('sandbox: the phone pushes its history to a newly linked companion', () => {
  let sandbox: RunningSandbox;
  const clients: SandboxClient[] = [];
  let phoneChats: PhoneChat[];

  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sandbox.descriptor.controlUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json: unknown = await res.json();
    expect(res.status, JSON.stringify(json)).toBe(200);
    return json;
  };

  const link = async (phone: string, full: boolean) => {
    const client = await linkClient(sandbox, phone, {
      socketConfig: {
        syncFullHistory: full,
        // Baileys' default leaves FULL syncs unprocessed even when it asked for them.
        shouldSyncHistoryMessage: () => true,
      },
    });
    clients.push(client);
    return client;
  };

  /** The syncs of one type, once the last chunk (progress 100) arrived. */
  const syncsOf = (client: SandboxClient, type: proto.HistorySync.HistorySyncType) =>
    waitFor(
      `the ${HistorySyncType[type]} sync`,
      () => {
        const syncs = client.histories.filter((h) => h.syncType === type);
        const last = syncs.find((h) => h.progress === 100);
        return last && syncs.length === (last.chunkOrder ?? 0) + 1 ? syncs : undefined;
      },
      { timeoutMs: 60_000 },
    );

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    await createPhone(sandbox, ALICE, 'Alice');
    await createPhone(sandbox, BOB, 'Bob');
    await control('POST', `/phones/${ALICE}/history`, { chats: SEEDED_CHATS, messagesPerChat: PER_CHAT, days: 365, media: 2 });
    // A conversation the two phones had: Alice's phone keeps both directions.
    await control('POST', `/phones/${ALICE}/messages`, { to: BOB, text: 'hello bob' });
    await control('POST', `/phones/${BOB}/messages`, { to: ALICE, text: 'hello alice' });
    phoneChats = ((await control('GET', `/phones/${ALICE}/history`)) as { chats: PhoneChat[] }).chats;
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await sandbox?.stop();
  });

  it('keeps what the phones exchanged, in order, with ids and direction', () => {
    const withBob = phoneChats.find((c) => c.jid === `${BOB}@s.whatsapp.net`);
    expect(withBob?.messages.map((m) => m.fromMe)).toEqual([true, false]);
    expect(withBob?.unread).toBe(1);
    expect(withBob?.pushName).toBe('Bob');
    expect(phoneChats).toHaveLength(SEEDED_CHATS + 1);
  });

  it('a companion that asked for the full history gets RECENT then FULL, chunked with progress, every message once', async () => {
    const client = await link(ALICE, true);
    const recent = await syncsOf(client, HistorySyncType.RECENT);
    const full = await syncsOf(client, HistorySyncType.FULL);
    const cutoff = Date.now() / 1000 - RECENT_DAYS * 86_400;

    for (const syncs of [recent, full]) {
      // Baileys downloads chunks concurrently: they are emitted in any order, and carry theirs.
      const ordered = [...syncs].sort((a, b) => (a.chunkOrder ?? 0) - (b.chunkOrder ?? 0));
      expect(ordered.map((s) => s.chunkOrder)).toEqual(ordered.map((_, i) => i));
      const progress = ordered.map((s) => s.progress ?? 0);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
      expect(progress.at(-1)).toBe(100);
    }
    expect(full.length).toBeGreaterThan(1);
    const times = (syncs: HistorySet[]) => syncs.flatMap((s) => s.messages.map((m) => Number(m.messageTimestamp)));
    expect(times(recent).every((t) => t >= cutoff - 60)).toBe(true);
    expect(times(full).every((t) => t < cutoff + 60)).toBe(true);

    const ids = [...recent, ...full].flatMap((s) => s.messages.map((m) => m.key.id));
    const kept = phoneChats.flatMap((c) => c.messages.map((m) => m.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(kept));

    // Chats carry the phone's unread count and the time of their last message.
    const chats = new Map([...recent, ...full].flatMap((s) => s.chats.map((c) => [c.id, c] as const)));
    for (const chat of phoneChats) {
      expect(chats.get(chat.jid)?.unreadCount).toBe(chat.unread);
      expect(Number(chats.get(chat.jid)?.conversationTimestamp)).toBe(chat.messages.at(-1)?.timestamp);
    }
    // Saved names come with the conversations, push names in their own PUSH_NAME sync.
    const contacts = [...recent, ...full].flatMap((s) => s.contacts);
    expect(contacts).toContainEqual(expect.objectContaining({ id: phoneChats[0]?.jid, name: 'Contact 0' }));
    const pushNames = client.histories.filter((h) => h.syncType === HistorySyncType.PUSH_NAME).flatMap((h) => h.contacts);
    expect(pushNames).toContainEqual({ id: phoneChats[1]?.jid, notify: 'Person 1' });
    expect(client.unexpectedErrors).toEqual([]);
  });

  it('media in the history is on the media host, encrypted: the companion downloads and decrypts it', async () => {
    const client = clients[0];
    if (!client) throw new Error('no linked client');
    const images: WAMessage[] = client.histories.flatMap((h) => h.messages.filter((m) => m.message?.imageMessage));
    expect(images).toHaveLength(2);
    const bytes = await downloadMediaMessage(images[0] as WAMessage, 'buffer', {
      options: sandboxMediaDownloadOptions(sandbox.descriptor),
    });
    expect(Buffer.compare(bytes, PROFILE_PICTURE)).toBe(0);
  });

  it('a companion that did not ask for the full history gets RECENT only', async () => {
    const client = await link(ALICE, false);
    const recent = await syncsOf(client, HistorySyncType.RECENT);
    expect(recent.flatMap((s) => s.messages).length).toBeGreaterThan(0);
    // The phone sends FULL after RECENT, so by now it would be here.
    await waitFor('the RECENT receipts', async () => {
      const devices = ((await control('GET', `/phones/${ALICE}`)) as { devices: Array<{ jid: string; unreceipted: number }> }).devices;
      return devices.find((d) => d.jid === client.jid)?.unreceipted === 0;
    });
    expect(client.histories.filter((h) => h.syncType === HistorySyncType.FULL)).toEqual([]);
  });
  it('answers an on-demand request (the peer message to device 0) with an ON_DEMAND sync of the messages before', async () => {
    // The companion with RECENT only: Baileys drops history messages it was given before
    // (Utils/event-buffer.js), and the other one has the older ones from FULL.
    const client = clients[1];
    if (!client?.sock) throw new Error('no linked client');
    const chat = phoneChats[3];
    const oldest = client.histories
      .filter((h) => h.syncType === HistorySyncType.RECENT)
      .flatMap((h) => h.messages)
      .filter((m) => m.key.remoteJid === chat?.jid)
      .sort((a, b) => Number(a.messageTimestamp) - Number(b.messageTimestamp))[0];
    if (!chat || !oldest) throw new Error('no RECENT message of the chat');
    await client.sock.fetchMessageHistory(5, oldest.key, Number(oldest.messageTimestamp) * 1000);
    const [answer] = await waitFor('the ON_DEMAND sync', () => {
      const found = client.histories.filter((h) => h.syncType === HistorySyncType.ON_DEMAND);
      return found.length > 0 ? found : undefined;
    });
    const at = chat.messages.findIndex((m) => m.id === oldest.key.id);
    expect(answer?.messages.map((m) => m.key.id).sort()).toEqual(
      chat.messages
        .slice(at - 5, at)
        .map((m) => m.id)
        .sort(),
    );
  });
});
