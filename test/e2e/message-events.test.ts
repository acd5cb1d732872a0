import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { WAMessage } from '@whiskeysockets/baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookKey } from '../../core/keys.js';
import { findMessage } from '../../core/store/messages.js';
import { createFixtureDir, generateTone } from '../connector/media/fixtures.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { startTestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { voteMessage } from './support/poll-vote.js';

/**
 * Message status and the message-level events end to end, over the sandbox network: a message
 * the account sent moves sent -> delivered -> read (-> played) as the other side receives and
 * reads it (another gateway account, or a phone through the sandbox control API), visible on
 * the API's message and as `message.status` webhooks; reactions, edits and revokes from the
 * other side arrive as their events, and so does a poll vote (`message.poll_vote`, kept on the
 * poll); `message` events carry fromPn/fromLid.
 */
describe('message status and message events', { timeout: 180_000 }, () => {
  let gw: Gateway;
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let fixtures: Awaited<ReturnType<typeof createFixtureDir>>;
  const receiver = new WebhookReceiver();
  const alice = { id: 'evalice', phone: '15550500001', jid: '15550500001@s.whatsapp.net' };
  const bob = { id: 'evbob', phone: '15550500002', jid: '15550500002@s.whatsapp.net' };
  const carol = { phone: '15550500003', jid: '15550500003@s.whatsapp.net' };
  let aliceLid = '';

  async function link(account: { id: string; phone: string }) {
    const created = await gw.control.createPhone(account.phone);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: account.id })).status).toBe(201);
    await gw.linkAccount(account.id, account.phone, { logsFrom: from });
    return created;
  }

  async function sendText(from: string, to: string, message: string): Promise<string> {
    const sent = await api.call('POST', `/accounts/${from}/message/send`, { to, message });
    expect(sent.body, JSON.stringify(sent.body)).toMatchObject({ ok: true });
    return String(sent.body.messageId);
  }

  async function apiMessage(accountId: string, messageId: string) {
    const response = await api.call('GET', `/accounts/${accountId}/messages/${messageId}`);
    return response.body.message as Record<string, unknown> | undefined;
  }

  const waitForStatus = (accountId: string, messageId: string, status: string) =>
    waitFor(`${messageId} to be ${status}`, async () => {
      const message = await apiMessage(accountId, messageId);
      return message?.status === status ? message : undefined;
    });

  /** The bodies POSTed for `event` of `accountId`, with their X-Webhook-Id. */
  const posted = (event: string, accountId: string) =>
    receiver.posts
      .filter((p) => p.headers['x-webhook-event'] === event && (p.body as { accountId?: string }).accountId === accountId)
      .map((p) => ({ id: String(p.headers['x-webhook-id']), body: p.body as Record<string, unknown> }));

  const statusesPosted = (accountId: string, messageId: string) =>
    posted('message.status', accountId)
      .filter((p) => p.body.messageId === messageId)
      .map((p) => {
        expect(p.id).toBe(`${accountId}:${messageId}:status:${String(p.body.status)}`);
        return String(p.body.status);
      });

  beforeAll(async () => {
    fixtures = await createFixtureDir();
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    await receiver.up();
    // A webhook for every event (the registration route's `events` is another change's).
    await gw.table.doc.send(
      new PutCommand({
        TableName: gw.table.name,
        Item: { ...webhookKey(receiver.url), url: receiver.url, events: ['*'], createdAt: new Date().toISOString() },
      }),
    );
    aliceLid = (await link(alice)).lid;
    await link(bob);
    await gw.control.createPhone(carol.phone, 'Carol');
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
    await receiver.close();
    await fixtures?.remove();
  });

  it('gateway to gateway: sent -> delivered -> read when the other account reads it, one event each', async () => {
    const messageId = await sendText(alice.id, bob.jid, 'read me, bob');
    await waitFor('bob to store it', () => findMessage(gw.table, bob.id, messageId));
    const delivered = await waitForStatus(alice.id, messageId, 'delivered');
    expect(delivered.statusAt).toEqual(expect.any(Number));

    const bobSocket = gw.connector.registry.get(bob.id)?.socket;
    expect(bobSocket).toBeDefined();
    await bobSocket!.readMessages([{ remoteJid: alice.jid, id: messageId, fromMe: false }]);
    await waitForStatus(alice.id, messageId, 'read');

    // The chat's list shows it too.
    const listed = await api.call('GET', `/accounts/${alice.id}/chats/${encodeURIComponent(bob.jid)}/messages`);
    expect((listed.body.messages as Array<Record<string, unknown>>).find((m) => m.messageId === messageId)).toMatchObject({
      status: 'read',
    });
    await receiver.waitFor(() => statusesPosted(alice.id, messageId).length >= 3, 60_000);
    expect(statusesPosted(alice.id, messageId).sort()).toEqual(['delivered', 'read', 'sent']);
    const read = posted('message.status', alice.id).find((p) => p.body.messageId === messageId && p.body.status === 'read');
    expect(read?.body).toEqual({
      event: 'message.status',
      accountId: alice.id,
      messageId,
      chatId: bob.jid,
      status: 'read',
      timestamp: expect.any(Number),
    });
    // Inbound messages have no status.
    expect((await apiMessage(bob.id, messageId))?.status).toBeUndefined();
  });

  it('to a phone: delivered at once, read and played through the sandbox control API; never backwards', async () => {
    const text = await sendText(alice.id, carol.jid, 'read me, carol');
    await waitForStatus(alice.id, text, 'delivered');
    await waitFor("carol's phone to have it", async () => (await gw.control.inbox(carol.phone)).some((m) => m.id === text));
    expect((await gw.control.markReceived(carol.phone, 'read', [text])).receipted).toEqual([text]);
    await waitForStatus(alice.id, text, 'read');

    const path = join(fixtures.dir, 'note.mp3');
    await generateTone(path, 1);
    const form = new FormData();
    form.set('to', carol.jid);
    form.set('audio', new Blob([new Uint8Array(await readFile(path))], { type: 'audio/mpeg' }), 'note.mp3');
    const response = await fetch(`${api.url}/accounts/${alice.id}/message/send/audio`, { method: 'POST', body: form });
    const { messageId: voice } = (await response.json()) as { messageId: string };
    await waitForStatus(alice.id, voice, 'delivered');
    await waitFor("carol's phone to have the voice note", async () => (await gw.control.inbox(carol.phone)).some((m) => m.id === voice));
    await gw.control.markReceived(carol.phone, 'read', [voice]);
    await waitForStatus(alice.id, voice, 'read');
    // A late delivery receipt for the text read above, as Baileys would hand it over (the sandbox,
    // like WhatsApp, sends each receipt once); the played receipt below is handled after it.
    gw.connector.registry
      .get(alice.id)
      ?.socket?.ev.emit('messages.update', [{ key: { remoteJid: carol.jid, id: text, fromMe: true }, update: { status: 3 } }]);
    await gw.control.markReceived(carol.phone, 'played', [voice]);
    await waitForStatus(alice.id, voice, 'played');
    await receiver.waitFor(() => statusesPosted(alice.id, voice).length >= 4, 60_000);
    expect(statusesPosted(alice.id, voice).sort()).toEqual(['delivered', 'played', 'read', 'sent']);
    expect((await apiMessage(alice.id, text))?.status).toBe('read');
    expect(statusesPosted(alice.id, text).sort()).toEqual(['delivered', 'read', 'sent']);
  });

  it('reaction, edit and revoke by the other account arrive as their events; the edit changes the stored text', async () => {
    const messageId = await sendText(bob.id, alice.jid, 'helo alice');
    await waitFor('alice to store it', () => findMessage(gw.table, alice.id, messageId));

    const bobSocket = gw.connector.registry.get(bob.id)?.socket;
    await bobSocket!.sendMessage(alice.jid, { text: 'hello alice', edit: { remoteJid: alice.jid, fromMe: true, id: messageId } });
    await waitFor('the edit on alice', async () => (await findMessage(gw.table, alice.id, messageId))?.text === 'hello alice');

    const react = await api.call('POST', `/accounts/${bob.id}/message/react`, { to: alice.jid, messageId, emoji: '🔥' });
    expect(react.body).toMatchObject({ ok: true });
    const deleted = await api.call('POST', `/accounts/${bob.id}/message/delete`, { to: alice.jid, messageId });
    expect(deleted.body).toMatchObject({ ok: true });

    await receiver.waitFor(
      () =>
        ['message.edited', 'message.reaction', 'message.revoked'].every((e) =>
          posted(e, alice.id).some((p) => p.body.messageId === messageId),
        ),
      60_000,
    );
    const [edited] = posted('message.edited', alice.id).filter((p) => p.body.messageId === messageId);
    expect(edited?.body).toEqual({
      event: 'message.edited',
      accountId: alice.id,
      messageId,
      chatId: bob.jid,
      from: bob.jid,
      text: 'hello alice',
      timestamp: expect.any(Number),
    });
    const [reaction] = posted('message.reaction', alice.id).filter((p) => p.body.messageId === messageId);
    expect(reaction?.body).toEqual({
      event: 'message.reaction',
      accountId: alice.id,
      messageId,
      chatId: bob.jid,
      from: bob.jid,
      emoji: '🔥',
      timestamp: expect.any(Number),
    });
    const revoked = posted('message.revoked', alice.id).filter((p) => p.body.messageId === messageId);
    expect(revoked.map((p) => p.id)).toEqual([`${alice.id}:${messageId}:revoked`]);
    expect(revoked[0]?.body).toMatchObject({ chatId: bob.jid, from: bob.jid, timestamp: expect.any(Number) });
    expect(await findMessage(gw.table, alice.id, messageId)).toMatchObject({ revoked: true });
  });

  it('the message event carries fromPn and fromLid when WhatsApp gave both', async () => {
    const messageId = await sendText(alice.id, bob.jid, 'who am I');
    await receiver.waitFor(() => posted('message', bob.id).some((p) => p.body.messageId === messageId), 60_000);
    const event = posted('message', bob.id).find((p) => p.body.messageId === messageId);
    expect(event?.body).toMatchObject({ from: alice.jid, fromPn: alice.jid, fromLid: aliceLid });
  });
  it('a vote by the other account on a poll sent through the API arrives as message.poll_vote and stays on the poll', async () => {
    const bobSocket = gw.connector.registry.get(bob.id)?.socket;
    expect(bobSocket).toBeDefined();
    const received: WAMessage[] = [];
    bobSocket!.ev.on('messages.upsert', ({ messages }) => received.push(...messages));
    const sent = await api.call('POST', `/accounts/${alice.id}/message/send/poll`, {
      to: bob.jid,
      name: 'Where?',
      options: ['Here', 'There'],
    });
    expect(sent.body).toMatchObject({ ok: true });
    const pollId = String(sent.body.messageId);
    const poll = await waitFor("bob's socket to get the poll", () => received.find((m) => m.key.id === pollId));

    const voteId = await bobSocket!.relayMessage(alice.jid, voteMessage(poll, alice.jid, bob.jid, ['There']), {});
    await receiver.waitFor(() => posted('message.poll_vote', alice.id).length > 0, 60_000);
    expect(posted('message.poll_vote', alice.id)).toEqual([
      {
        id: `${alice.id}:${voteId}`,
        body: {
          event: 'message.poll_vote',
          accountId: alice.id,
          messageId: pollId,
          chatId: bob.jid,
          from: bob.jid,
          selected: ['There'],
          timestamp: expect.any(Number),
        },
      },
    ]);
    expect((await findMessage(gw.table, alice.id, pollId))?.pollVotes).toEqual([
      { from: bob.jid, selected: ['There'], timestamp: expect.any(Number) },
    ]);
    expect(await apiMessage(alice.id, pollId)).toMatchObject({ pollVotes: [{ from: bob.jid, selected: ['There'] }] });
  });
});
