import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountPartition, MESSAGE_SK_PREFIX } from '../../core/keys.js';
import { findChat } from '../../core/store/chats.js';
import { listInboxRecords } from '../../core/store/inbox.js';
import { findLease } from '../../core/store/leases.js';
import { queryPartitionPrefix } from '../../core/store/paging.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { connectByCommand } from './support/commands.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * kill -9 of the connector in the middle of a history import: Baileys receipts each chunk's
 * notification before the chunk is downloaded, so what brings the rest back is the
 * notification's write-ahead record (connector/history/history-import.ts). After the restart the
 * import completes, with every message once and the chats' unread counts as the phone has them.
 */
describe('history import across a connector crash', { timeout: 240_000 }, () => {
  let gw: Gateway;
  const children: ChildConnector[] = [];
  const alice = { id: 'histcrash', phone: '15550930001' };
  const CHATS = 30;
  const PER_CHAT = 300;

  const storedIds = async () =>
    (await queryPartitionPrefix(gw.table, accountPartition(alice.id), MESSAGE_SK_PREFIX)).map((item) => String(item.messageId));
  const spawnChild = async () => {
    const child = spawnConnector(gw.env);
    children.push(child);
    await waitFor(
      'the child connector to own the account',
      async () => (await findLease(gw.table, alice.id))?.owner.includes(`:${child.pid}:`),
      {
        intervalMs: 100,
      },
    );
    await gw.waitForStatus(alice.id, 'connected');
    return child;
  };

  beforeAll(async () => {
    gw = await startGateway();
    await connectByCommand(gw, alice);
    await gw.stopConnector();
    // All within the last 60 days: one RECENT sync of 9 chunks.
    await gw.control.seedHistory(alice.phone, { chats: CHATS, messagesPerChat: PER_CHAT, days: 60 });
  });
  afterAll(async () => {
    for (const child of children) await child.kill();
    await gw?.stop();
  });

  it('kill -9 mid-import: after the restart every message is stored once and the chats are right', async () => {
    const phoneChats = await gw.control.history(alice.phone);
    const expected = phoneChats.flatMap((c) => c.messages.map((m) => m.id));
    expect(expected).toHaveLength(CHATS * PER_CHAT);

    const first = await spawnChild();
    await gw.control.pushHistory(alice.phone, 'recent');
    await first.waitForLine('a first chunk imported', (l) => l.msg === 'history chunk imported');
    await first.kill();
    const storedAtCrash = (await storedIds()).length;
    const recordsAtCrash = await listInboxRecords(gw.table, alice.id);
    expect(storedAtCrash).toBeLessThan(expected.length);
    // The chunks receipted but not imported are held by their notifications' records.
    expect(recordsAtCrash.length).toBeGreaterThan(0);

    await spawnChild();
    const stored = await waitFor(
      'every message of the history stored',
      async () => {
        const ids = await storedIds();
        return ids.length >= expected.length ? ids : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(stored.sort()).toEqual([...expected].sort());
    for (const chat of phoneChats.slice(0, 5)) {
      const found = await findChat(gw.table, alice.id, chat.jid);
      expect(found?.unreadCount).toBe(chat.unread);
      expect(found?.lastMessageTime).toBe((chat.messages.at(-1)?.timestamp ?? 0) * 1000);
    }
    await waitFor('the write-ahead records retired', async () =>
      (await listInboxRecords(gw.table, alice.id)).length === 0 ? true : undefined,
    );
  });
});
