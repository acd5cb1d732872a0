import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCreds } from '../../core/store/auth-state.js';
import { findLease } from '../../core/store/leases.js';
import { findMessage } from '../../core/store/messages.js';
import { partitionKeys } from '../../core/store/batch.js';
import { accountPartition } from '../../core/keys.js';
import { startTestApi } from '../support/test-api.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * The whole system: HTTP API, command queue, connector, sandbox WhatsApp network. Two accounts
 * are linked by scanning the QR read from the connector's log; everything after that goes
 * through the HTTP API only (the store and the sandbox are read to check the other side).
 *
 * One story in nine steps, run in order: each step starts from the state the previous ones left
 * (linked accounts, the messages already exchanged, a disconnected or logged-out account), the
 * way one account lives from its QR to its deletion. Linking over QR is the slow part, so the
 * steps share it instead of each linking its own accounts; when a step fails, the first failure
 * is the one to read, the later ones may only be its consequence.
 */
// Generous: each step waits on real sockets, queues and emulators, on a possibly busy 2-core machine.
describe('story: two accounts from QR link to deletion, step by step', { timeout: 180_000 }, () => {
  let gw: Gateway;
  let api: Awaited<ReturnType<typeof startTestApi>>;
  const alice = { id: 'alice', phone: '15550400001', jid: '15550400001@s.whatsapp.net' };
  const bob = { id: 'bob', phone: '15550400002', jid: '15550400002@s.whatsapp.net' };

  async function sendText(from: { id: string }, to: string, message: string): Promise<string> {
    const response = await api.call('POST', `/accounts/${from.id}/message/send`, { to, message });
    expect(response.body, JSON.stringify(response.body)).toMatchObject({ ok: true });
    expect(response.status).toBe(200);
    return String(response.body.messageId);
  }

  async function messagesOf(accountId: string, chatId: string) {
    const response = await api.call('GET', `/accounts/${accountId}/chats/${encodeURIComponent(chatId)}/messages`);
    expect(response.status).toBe(200);
    return response.body.messages as Array<Record<string, unknown>>;
  }

  async function status(accountId: string) {
    const response = await api.call('GET', `/accounts/${accountId}`);
    return response.body.account as Record<string, unknown> | undefined;
  }

  async function waitForApiStatus(accountId: string, wanted: string, timeoutMs = 60_000) {
    await waitFor(`${accountId} to be ${wanted}`, async () => (await status(accountId))?.status === wanted, { timeoutMs });
  }

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
  });

  it('two accounts: QR from the connector log, scanned by each phone, both connected', async () => {
    for (const account of [alice, bob]) {
      await gw.control.createPhone(account.phone);
      const from = gw.logs.lines.length;
      const created = await api.call('POST', '/accounts', { id: account.id, name: `${account.id}'s phone` });
      expect(created.status).toBe(201);
      expect(created.body.account).toMatchObject({ _id: account.id, status: 'connecting', collectionName: `auth_${account.id}` });

      const qr = await gw.logs.waitForQr(account.id, { from });
      await waitFor('hasQR while the QR waits', async () => (await status(account.id))?.hasQR === true);
      await gw.control.scan(account.phone, qr);
      await waitForApiStatus(account.id, 'connected');
    }
    const listed = await api.call('GET', '/accounts');
    const accounts = listed.body.accounts as Array<Record<string, unknown>>;
    for (const id of [alice.id, bob.id]) {
      expect(accounts.find((a) => a._id === id)).toMatchObject({ status: 'connected', currentStatus: 'connected', hasQR: false });
    }
    const statusResponse = await api.call('GET', `/accounts/${alice.id}/status`);
    expect(statusResponse.body).toMatchObject({ ok: true, status: 'connected', accountId: alice.id });
  });

  it('text both ways: stored on both sides, listed in chats and messages, fetched singly', async () => {
    const toBob = await sendText(alice, bob.jid, 'Hello Bob 👋\nsecond line');
    const toAlice = await sendText(bob, alice.jid, 'Hi Alice');

    const onBob = await waitFor('bob to receive the text', () => findMessage(gw.table, bob.id, toBob));
    expect(onBob).toMatchObject({ text: 'Hello Bob 👋\nsecond line', fromMe: false, from: alice.jid, chatId: alice.jid });
    await waitFor('alice to receive the text', () => findMessage(gw.table, alice.id, toAlice));

    const aliceChats = await api.call('GET', `/accounts/${alice.id}/chats`);
    expect((aliceChats.body.chats as Array<Record<string, unknown>>).map((c) => c.chatId)).toContain(bob.jid);
    const aliceMessages = await messagesOf(alice.id, bob.jid);
    expect(aliceMessages.map((m) => m.messageId)).toEqual(expect.arrayContaining([toBob, toAlice]));
    expect(aliceMessages.find((m) => m.messageId === toBob)).toMatchObject({ fromMe: true, type: 'text' });

    const single = await api.call('GET', `/accounts/${bob.id}/messages/${toBob}`);
    expect(single.status).toBe(200);
    expect(single.body.message).toMatchObject({
      messageId: toBob,
      chatId: alice.jid,
      from: alice.jid,
      text: 'Hello Bob 👋\nsecond line',
      fromMe: false,
      type: 'text',
    });
  });

  it('reply (chatId detected), reaction and delete for everyone reach the other side', async () => {
    const original = await sendText(bob, alice.jid, 'Question?');
    await waitFor('alice to receive the question', () => findMessage(gw.table, alice.id, original));

    const reply = await api.call('POST', `/accounts/${alice.id}/message/reply`, {
      to: bob.jid,
      message: 'Answer!',
      quotedMessageId: original,
    });
    expect(reply.status).toBe(200);
    const replyId = String(reply.body.messageId);
    const replyOnBob = await waitFor('bob to receive the reply', () => findMessage(gw.table, bob.id, replyId));
    expect(replyOnBob).toMatchObject({ text: 'Answer!', quotedMessageId: original });

    const react = await api.call('POST', `/accounts/${alice.id}/message/react`, { to: bob.jid, messageId: original, emoji: '👍' });
    expect(react.body).toMatchObject({ ok: true });
    await waitFor("the reaction on bob's stored message", async () => {
      const stored = await findMessage(gw.table, bob.id, original);
      return stored?.reactions?.some((r) => r.emoji === '👍' && r.from === alice.jid);
    });

    const doomed = await sendText(alice, bob.jid, 'oops, wrong chat');
    await waitFor('bob to receive the doomed message', () => findMessage(gw.table, bob.id, doomed));
    const deleted = await api.call('POST', `/accounts/${alice.id}/message/delete`, { to: bob.jid, messageId: doomed });
    expect(deleted.body).toMatchObject({ ok: true });
    const revoked = await waitFor('bob to see the message revoked', async () => {
      const stored = await findMessage(gw.table, bob.id, doomed);
      return stored?.revoked ? stored : undefined;
    });
    expect(revoked.text).toBeUndefined();
  });

  it('a message sent from the phone itself (device 0) arrives as inbound', async () => {
    const { id } = await gw.control.sendFromPhone(bob.phone, alice.phone, 'typed on the phone');
    await waitFor('alice to list it', async () => (await messagesOf(alice.id, bob.jid)).some((m) => m.messageId === id));
    const single = await api.call('GET', `/accounts/${alice.id}/messages/${id}`);
    expect(single.body.message).toMatchObject({ text: 'typed on the phone', fromMe: false, from: bob.jid });
  });

  it('messages sent by the account reach the phone (device 0) too', async () => {
    const id = await sendText(alice, bob.jid, 'for the phone');
    await waitFor("bob's phone inbox to have it", async () => (await gw.control.inbox(bob.phone)).some((m) => m.id === id));
  });

  it('disconnect: not_started, sends fail with 500 internal_error; connect resumes without a QR', async () => {
    const disconnected = await api.call('POST', `/accounts/${alice.id}/disconnect`);
    expect(disconnected.body).toMatchObject({ ok: true });
    await waitForApiStatus(alice.id, 'not_started');

    const failed = await api.call('POST', `/accounts/${alice.id}/message/send`, { to: bob.jid, message: 'into the void' });
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ ok: false, error: 'internal_error' });

    const from = gw.logs.lines.length;
    const connected = await api.call('POST', `/accounts/${alice.id}/connect`);
    expect(connected.body).toMatchObject({ ok: true, status: 'connecting' });
    await waitForApiStatus(alice.id, 'connected');
    expect(gw.logs.linesSince(from, (l) => l.event === 'qr' && l.accountId === alice.id)).toEqual([]);
    await sendText(alice, bob.jid, 'back again');
  });

  it('a dropped connection: reconnecting, then connected again about 5 s later, no QR', async () => {
    const [device] = (await gw.control.devices(bob.phone)).filter((d) => d.device !== 0);
    const from = gw.logs.lines.length;
    await gw.control.kick(bob.phone, device!.device, 'end');
    const scheduled = await gw.logs.waitForLine(
      'the reconnect to be scheduled',
      (l) => l.accountId === bob.id && l.msg === 'reconnect scheduled',
      { from },
    );
    expect(scheduled.delayMs).toBeGreaterThanOrEqual(4_000);
    expect(scheduled.delayMs).toBeLessThanOrEqual(6_000);
    expect(gw.logs.linesSince(from, (l) => l.accountId === bob.id && l.status === 'reconnecting')).not.toEqual([]);
    await waitForApiStatus(bob.id, 'connected');
    expect(gw.logs.linesSince(from, (l) => l.event === 'qr')).toEqual([]);
    await sendText(bob, alice.jid, 'still here');
  });

  it('the phone logs the device out: logged_out; connect shows a new QR and links again', async () => {
    const linked = (await gw.control.devices(alice.phone)).filter((d) => d.device !== 0);
    expect(linked).toHaveLength(1);
    await gw.control.kick(alice.phone, linked[0]!.device, 'logout');
    await waitForApiStatus(alice.id, 'logged_out');
    expect(await readCreds(gw.table, `auth_${alice.id}`)).toBeUndefined();

    const from = gw.logs.lines.length;
    await api.call('POST', `/accounts/${alice.id}/connect`);
    await gw.linkAccount(alice.id, alice.phone, { logsFrom: from });
    await waitForApiStatus(alice.id, 'connected');
    await sendText(alice, bob.jid, 'relinked');
  });

  it('delete account removes the account, its messages, auth state and lease', async () => {
    const deleted = await api.call('DELETE', `/accounts/${bob.id}`);
    expect(deleted.body).toMatchObject({ ok: true });
    expect((await api.call('GET', `/accounts/${bob.id}`)).status).toBe(404);
    await waitFor("bob's data to be gone", async () => {
      const [items, creds, lease] = await Promise.all([
        partitionKeys(gw.table, accountPartition(bob.id)),
        readCreds(gw.table, `auth_${bob.id}`),
        findLease(gw.table, bob.id),
      ]);
      return items.length === 0 && creds === undefined && lease === undefined;
    });
    await waitFor('the session to be closed', () => !gw.connector.registry.get(bob.id));
    const stillAlice = await status(alice.id);
    expect(stillAlice?.status).toBe('connected');
  });
});
