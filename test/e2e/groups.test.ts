import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../core/schemas/message.js';
import { findMessage } from '../../core/store/messages.js';
import { listChats } from '../../core/store/chats.js';
import { linkClient, type SandboxClient } from '../sandbox/support/sandbox-client.js';
import { startTestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * Groups end to end on the sandbox: two gateway accounts and one raw Baileys client (carol's
 * phone) in one group, managed through the API, with text and media both ways stored on each
 * side with the participant who wrote them.
 */
describe('groups through the API', { timeout: 120_000 }, () => {
  let gw: Gateway;
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let carol: SandboxClient;
  let erin: SandboxClient | undefined;
  const erinPhone = '15550800005';
  const alice = { id: 'grpalice', phone: '15550800001' };
  const bob = { id: 'grpbob', phone: '15550800002' };
  const carolPhone = '15550800003';
  const jid = (phone: string) => `${phone}@s.whatsapp.net`;
  let groupId: string;

  async function link(account: { id: string; phone: string }) {
    await gw.control.createPhone(account.phone);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: account.id })).status).toBe(201);
    await gw.linkAccount(account.id, account.phone, { logsFrom: from });
  }

  const stored = (accountId: string, messageId: string, what: string, ready: (m: Message) => boolean = () => true) =>
    waitFor(what, async () => {
      const found = await findMessage(gw.table, accountId, messageId);
      return found && ready(found) ? found : undefined;
    });

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    expect([200, 201]).toContain((await api.call('POST', '/webhooks', { url: gw.webhooks.url })).status);
    await link(alice);
    await link(bob);
    carol = await linkClient(gw.sandbox, carolPhone, { pushName: 'Carol' });
  });
  afterAll(async () => {
    await carol?.stop();
    await erin?.stop();
    await api?.close();
    await gw?.stop();
  });

  it('creates a group of the three: alice owns it, everyone sees it', async () => {
    const created = await api.call('POST', `/accounts/${alice.id}/groups`, {
      subject: 'Ops',
      participants: [jid(bob.phone), jid(carolPhone)],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const group = created.body.group as { groupId: string; owner: string; participants: { jid: string; admin: string | null }[] };
    groupId = group.groupId;
    expect(groupId).toMatch(/^\d+@g\.us$/);
    expect(group.owner).toBe(jid(alice.phone));
    expect(group.participants).toEqual(
      expect.arrayContaining([
        { jid: jid(alice.phone), admin: 'superadmin' },
        { jid: jid(bob.phone), admin: null },
        { jid: jid(carolPhone), admin: null },
      ]),
    );
    const listed = await api.call('GET', `/accounts/${bob.id}/groups`);
    expect(listed.body.groups).toEqual([expect.objectContaining({ groupId, subject: 'Ops', size: 3, owner: jid(alice.phone) })]);
    const meta = await carol.sock!.groupMetadata(groupId);
    expect(meta.subject).toBe('Ops');
  });

  it('adds, promotes and removes with per-JID results; a plain member may not', async () => {
    const dave = '15550800004';
    await gw.control.createPhone(dave);
    const added = await api.call('POST', `/accounts/${alice.id}/groups/${groupId}/participants`, {
      action: 'add',
      participants: [jid(dave), jid(bob.phone)],
    });
    expect(added.body).toEqual({
      ok: true,
      results: [
        { jid: jid(dave), status: 200 },
        { jid: jid(bob.phone), status: 409 },
      ],
    });
    const refused = await api.call('POST', `/accounts/${bob.id}/groups/${groupId}/participants`, {
      action: 'remove',
      participants: [jid(dave)],
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ ok: false, error: 'Only group admins can do this' });

    const promoted = await api.call('POST', `/accounts/${alice.id}/groups/${groupId}/participants`, {
      action: 'promote',
      participants: [jid(bob.phone)],
    });
    expect(promoted.body).toEqual({ ok: true, results: [{ jid: jid(bob.phone), status: 200 }] });
    const removed = await api.call('POST', `/accounts/${bob.id}/groups/${groupId}/participants`, {
      action: 'remove',
      participants: [jid(dave)],
    });
    expect(removed.body).toEqual({ ok: true, results: [{ jid: jid(dave), status: 200 }] });

    const meta = await api.call('GET', `/accounts/${bob.id}/groups/${groupId}`);
    const participants = (meta.body.group as { participants: { jid: string; admin: string | null }[] }).participants;
    expect(new Map(participants.map((p) => [p.jid, p.admin]))).toEqual(
      new Map([
        [jid(alice.phone), 'superadmin'],
        [jid(bob.phone), 'admin'],
        [jid(carolPhone), null],
      ]),
    );
  });

  it('renames the group and gives its invite link; an unknown group is 404', async () => {
    expect(
      (await api.call('PATCH', `/accounts/${bob.id}/groups/${groupId}`, { subject: 'Ops team', description: 'on call' })).body,
    ).toEqual({
      ok: true,
      message: 'Group updated',
    });
    const meta = await api.call('GET', `/accounts/${alice.id}/groups/${groupId}`);
    expect(meta.body.group).toMatchObject({ subject: 'Ops team', description: 'on call' });
    const invite = await api.call('GET', `/accounts/${alice.id}/groups/${groupId}/invite`);
    expect(invite.body).toEqual({
      ok: true,
      code: expect.stringMatching(/^[\w-]{22}$/),
      url: `https://chat.whatsapp.com/${invite.body.code as string}`,
    });
    const unknown = await api.call('GET', `/accounts/${alice.id}/groups/120363000000000001@g.us`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ ok: false, error: 'Group not found' });
  });

  it('a text sent to the group by the gateway is stored by bob and read by carol, with alice as participant', async () => {
    const sent = await api.call('POST', `/accounts/${alice.id}/message/send`, { to: groupId, message: 'standup in 5' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const messageId = sent.body.messageId as string;
    const onBob = await stored(bob.id, messageId, 'bob to store the group text');
    expect(onBob).toMatchObject({
      chatId: groupId,
      from: jid(alice.phone),
      participant: jid(alice.phone),
      text: 'standup in 5',
      fromMe: false,
    });
    expect(await findMessage(gw.table, alice.id, messageId)).toMatchObject({
      chatId: groupId,
      fromMe: true,
      participant: jid(alice.phone),
    });
    const onCarol = await carol.waitForMessage((m) => m.key.id === messageId, 'carol to get the group text');
    expect(onCarol.message?.conversation ?? onCarol.message?.extendedTextMessage?.text).toBe('standup in 5');
    expect(onCarol.key.participant?.replace(/:\d+@/, '@')).toBe(jid(alice.phone));
    const hook = await waitFor('the webhook of bob', () =>
      gw.webhooks.posts.find((r) => (r.body as { messageId?: string; accountId?: string }).messageId === messageId),
    );
    expect(hook.body).toMatchObject({ chatId: groupId, from: jid(alice.phone), participant: jid(alice.phone) });
  });

  it('an image sent to the group by the gateway reaches carol and is stored by bob with its media', async () => {
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#22aa44' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set('to', groupId);
    form.set('caption', 'green');
    form.set('image', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'green.png');
    const response = await fetch(`${api.url}/accounts/${alice.id}/message/send/image`, { method: 'POST', body: form });
    const { messageId } = (await response.json()) as { messageId: string };
    expect(response.status).toBe(200);
    const onBob = await stored(bob.id, messageId, 'bob to store the group image', (m) => !!m.mediaId);
    expect(onBob).toMatchObject({ type: 'image', caption: 'green', chatId: groupId, participant: jid(alice.phone) });
    const onCarol = await carol.waitForMessage((m) => m.key.id === messageId, 'carol to get the group image');
    expect(onCarol.message?.imageMessage?.caption).toBe('green');
  });

  it("sends ask WhatsApp for the group's members once; a member added through the API gets the next send", async () => {
    const send = async (message: string) => {
      const sent = await api.call('POST', `/accounts/${alice.id}/message/send`, { to: groupId, message });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      return sent.body.messageId as string;
    };
    await send('first');
    const queries = await gw.control.groupMetadataQueries(alice.phone);
    const second = await send('second');
    await carol.waitForMessage((m) => m.key.id === second, 'carol to get the second text');
    expect(await gw.control.groupMetadataQueries(alice.phone)).toBe(queries);

    // Erin never had alice's sender key: a send with the old member list would not give her one.
    erin = await linkClient(gw.sandbox, erinPhone, { pushName: 'Erin' });
    const added = await api.call('POST', `/accounts/${alice.id}/groups/${groupId}/participants`, {
      action: 'add',
      participants: [jid(erinPhone)],
    });
    expect(added.body).toEqual({ ok: true, results: [{ jid: jid(erinPhone), status: 200 }] });
    const third = await send('third');
    const onErin = await erin.waitForMessage((m) => m.key.id === third, 'erin to get the text sent after she joined');
    expect(onErin.message?.conversation ?? onErin.message?.extendedTextMessage?.text).toBe('third');
    expect(await gw.control.groupMetadataQueries(alice.phone)).toBeGreaterThan(queries);
    expect(erin.unexpectedErrors).toEqual([]);
  });

  it('text and media from the raw client are stored by both accounts with carol as participant', async () => {
    const text = await carol.sock!.sendMessage(groupId, { text: 'hi from carol' });
    const image = await carol.sock!.sendMessage(groupId, {
      image: Buffer.from('carol bytes'),
      mimetype: 'image/jpeg',
      caption: 'carol pic',
    });
    for (const account of [alice, bob]) {
      const gotText = await stored(account.id, text!.key.id!, `${account.id} to store carol's text`);
      expect(gotText).toMatchObject({ chatId: groupId, from: jid(carolPhone), participant: jid(carolPhone), text: 'hi from carol' });
      const gotImage = await stored(account.id, image!.key.id!, `${account.id} to store carol's image`, (m) => !!m.mediaId);
      expect(gotImage).toMatchObject({ type: 'image', caption: 'carol pic', participant: jid(carolPhone) });
      const media = await fetch(`${api.url}/accounts/${account.id}/messages/${gotImage.mediaId}/media`);
      expect(Buffer.from(await media.arrayBuffer()).toString()).toBe('carol bytes');
    }
  });

  it("lists the group chat under the group's subject", async () => {
    const chats = await listChats(gw.table, bob.id, { limit: 50, skip: 0 });
    expect(chats.find((c) => c.chatId === groupId)?.name).toBe('Ops team');
  });

  it("a phone-only member's read moves the group message to read for the sender", async () => {
    const dave = '15550800004';
    const created = await api.call('POST', `/accounts/${alice.id}/groups`, { subject: 'Phones', participants: [jid(dave)] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const phonesGroup = (created.body.group as { groupId: string }).groupId;
    const sent = await api.call('POST', `/accounts/${alice.id}/message/send`, { to: phonesGroup, message: 'read me, dave' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const messageId = sent.body.messageId as string;
    const status = (wanted: string) =>
      waitFor(`the group message to be ${wanted}`, async () => {
        const { body } = await api.call('GET', `/accounts/${alice.id}/messages/${messageId}`);
        return (body.message as { status?: string } | undefined)?.status === wanted ? true : undefined;
      });
    await status('delivered');
    const inbox = await waitFor("dave's phone to have it", async () => (await gw.control.inbox(dave)).find((m) => m.id === messageId));
    expect(inbox).toMatchObject({ from: jid(alice.phone), chat: phonesGroup, type: 'group' });
    expect((await gw.control.markReceived(dave, 'read', [messageId])).receipted).toEqual([messageId]);
    await status('read');
    // Like WhatsApp, the sender hears a member's read once.
    expect((await gw.control.markReceived(dave, 'read', [messageId])).receipted).toEqual([]);
  });

  it('bob leaves: the group no longer lists him', async () => {
    expect((await api.call('POST', `/accounts/${bob.id}/groups/${groupId}/leave`)).body).toEqual({ ok: true, message: 'Left the group' });
    expect((await api.call('GET', `/accounts/${bob.id}/groups`)).body).toEqual({ ok: true, groups: [] });
    const meta = await api.call('GET', `/accounts/${alice.id}/groups/${groupId}`);
    expect((meta.body.group as { participants: { jid: string }[] }).participants.map((p) => p.jid)).not.toContain(jid(bob.phone));
    expect(carol.unexpectedErrors).toEqual([]);
  });
});
