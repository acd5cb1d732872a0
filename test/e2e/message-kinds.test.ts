import { proto, type WAMessage } from '@whiskeysockets/baileys';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../core/schemas/message.js';
import { findChat } from '../../core/store/chats.js';
import { findMessage } from '../../core/store/messages.js';
import { linkClient, type SandboxClient } from '../sandbox/support/sandbox-client.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { voteMessage } from './support/poll-vote.js';

/**
 * The message kinds beyond text and media, end to end on the sandbox: two gateway accounts
 * (alice, bob) and carol, a raw Baileys client. Each kind goes from the API to the other side,
 * and from carol to the gateway, and is stored with its fields.
 */
describe('message kinds through the API and the sandbox', () => {
  let gw: Gateway;
  let api: TestApi;
  let carol: SandboxClient;
  const alice = { id: 'kindsalice', phone: '15550400001', pushName: 'Alice' };
  const bob = { id: 'kindsbob', phone: '15550400002', pushName: 'Bob' };
  const carolPhone = '15550400003';
  const aliceJid = `${alice.phone}@s.whatsapp.net`;
  const bobJid = `${bob.phone}@s.whatsapp.net`;
  const carolJid = `${carolPhone}@s.whatsapp.net`;

  async function link(account: { id: string; phone: string; pushName: string }) {
    await gw.control.createPhone(account.phone, account.pushName);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: account.id })).status).toBe(201);
    await gw.linkAccount(account.id, account.phone, { logsFrom: from });
  }

  async function send(accountId: string, path: string, body: unknown): Promise<string> {
    const { status, body: answer } = await api.call('POST', `/accounts/${accountId}/${path}`, body);
    expect({ status, answer }).toMatchObject({ status: 200, answer: { ok: true } });
    return (answer as { messageId: string }).messageId;
  }

  const storedOn = (
    accountId: string,
    messageId: string,
    what = `${accountId} to store ${messageId}`,
    ready: (m: Message) => boolean = () => true,
  ) =>
    waitFor(what, async () => {
      const found = await findMessage(gw.table, accountId, messageId);
      return found && ready(found) ? found : undefined;
    });

  const carolGot = (messageId: string) => carol.waitForMessage((m) => m.key.id === messageId, `carol to receive ${messageId}`);

  async function sendSticker(accountId: string, to: string, file: Buffer, type: string): Promise<string> {
    const form = new FormData();
    form.set('to', to);
    form.set('sticker', new Blob([new Uint8Array(file)], { type }), 'sticker');
    const response = await fetch(`${api.url}/accounts/${accountId}/message/send/sticker`, { method: 'POST', body: form });
    const answer = (await response.json()) as { ok: boolean; messageId: string };
    expect({ status: response.status, answer }).toMatchObject({ status: 200, answer: { ok: true } });
    return answer.messageId;
  }

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    await link(alice);
    await link(bob);
    carol = await linkClient(gw.sandbox, carolPhone, { pushName: 'Carol' });
  }, 120_000);
  afterAll(async () => {
    await carol?.stop();
    await api?.close();
    await gw?.stop();
  });

  it('location: gateway to gateway with its fields; raw client to gateway', async () => {
    const id = await send(alice.id, 'message/send/location', {
      to: bobJid,
      latitude: 52.5163,
      longitude: 13.3777,
      name: 'Tor',
      address: 'Pariser Platz',
    });
    expect(await storedOn(bob.id, id)).toMatchObject({
      type: 'location',
      latitude: 52.5163,
      longitude: 13.3777,
      name: 'Tor',
      address: 'Pariser Platz',
    });
    expect(await storedOn(alice.id, id)).toMatchObject({ type: 'location', fromMe: true, latitude: 52.5163 });

    const sent = await carol.sock!.sendMessage(aliceJid, { location: { degreesLatitude: -33.86, degreesLongitude: 151.21 } });
    expect(await storedOn(alice.id, sent!.key.id!)).toMatchObject({
      type: 'location',
      from: carolJid,
      latitude: -33.86,
      longitude: 151.21,
    });
  });

  it('contact: the vCard built from name and phone arrives; a raw client card is stored with its vCard', async () => {
    const id = await send(alice.id, 'message/send/contact', {
      to: carolJid,
      contacts: [{ name: 'Ada Lovelace', phone: '+44 20 7946 0000' }],
    });
    const got = await carolGot(id);
    expect(got.message?.contactMessage?.displayName).toBe('Ada Lovelace');
    expect(got.message?.contactMessage?.vcard).toContain('TEL;type=CELL;type=VOICE;waid=442079460000:+442079460000');

    const vcard = 'BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nTEL;waid=15550400002:+15550400002\nEND:VCARD';
    const sent = await carol.sock!.sendMessage(aliceJid, { contacts: { displayName: 'Bob', contacts: [{ displayName: 'Bob', vcard }] } });
    expect(await storedOn(alice.id, sent!.key.id!)).toMatchObject({ type: 'contact', text: 'Bob', vcards: [vcard] });
  });

  it('poll: arrives with its options; a vote from the raw client is decrypted and kept on the poll', async () => {
    const id = await send(alice.id, 'message/send/poll', { to: carolJid, name: 'Lunch?', options: ['Pizza', 'Sushi', 'Soup'] });
    expect(await storedOn(alice.id, id)).toMatchObject({
      type: 'poll',
      text: 'Lunch?',
      pollOptions: ['Pizza', 'Sushi', 'Soup'],
      selectableCount: 1,
    });
    const poll = await carolGot(id);
    const creation = poll.message?.pollCreationMessageV3 ?? poll.message?.pollCreationMessage;
    expect(creation?.options?.map((o) => o.optionName)).toEqual(['Pizza', 'Sushi', 'Soup']);

    await carol.sock!.relayMessage(aliceJid, voteMessage(poll, aliceJid, carolJid, ['Sushi']), {});
    const voted = await storedOn(alice.id, id, 'the vote on the poll', (m) => (m.pollVotes?.length ?? 0) > 0);
    expect(voted.pollVotes).toEqual([{ from: carolJid, selected: ['Sushi'], timestamp: expect.any(Number) }]);

    const theirs = await carol.sock!.sendMessage(aliceJid, { poll: { name: 'Tea?', values: ['Yes', 'No'], selectableCount: 0 } });
    expect(await storedOn(alice.id, theirs!.key.id!)).toMatchObject({
      type: 'poll',
      from: carolJid,
      text: 'Tea?',
      pollOptions: ['Yes', 'No'],
      selectableCount: 0,
    });
  });

  it('sticker: a PNG arrives as a 512×512 WebP sticker with its media stored; a raw client sticker is stored', async () => {
    const png = await sharp({ create: { width: 300, height: 150, channels: 4, background: '#ff8800' } })
      .png()
      .toBuffer();
    const id = await sendSticker(alice.id, bobJid, png, 'image/png');
    const stored = await storedOn(bob.id, id, 'bob to store the sticker media', (m) => m.mediaId !== undefined);
    expect(stored).toMatchObject({ type: 'sticker', mimetype: 'image/webp', hasMedia: true });
    const media = await fetch(`${api.url}/accounts/${bob.id}/messages/${stored.messageId}/media`);
    const bytes = Buffer.from(await media.arrayBuffer());
    expect(await sharp(bytes).metadata()).toMatchObject({ format: 'webp', width: 512, height: 512 });

    const webp = await sharp({ create: { width: 512, height: 512, channels: 4, background: '#0088ff' } })
      .webp()
      .toBuffer();
    const sent = await carol.sock!.sendMessage(aliceJid, { sticker: webp });
    expect(await storedOn(alice.id, sent!.key.id!, 'alice to store the sticker media', (m) => m.mediaId !== undefined)).toMatchObject({
      type: 'sticker',
      from: carolJid,
      hasMedia: true,
    });
  });

  it('sticker: an animated GIF stays animated, every frame fitted into 512×512 on transparency, marked isAnimated', async () => {
    const frame = (background: string) =>
      sharp({ create: { width: 300, height: 150, channels: 4, background } })
        .png()
        .toBuffer();
    const gif = await sharp([await frame('#ff0000'), await frame('#00ff00'), await frame('#0000ff')], { join: { animated: true } })
      .gif({ delay: [100, 100, 100], loop: 0 })
      .toBuffer();
    const bobSocket = gw.connector.registry.get(bob.id)?.socket;
    const received: WAMessage[] = [];
    bobSocket!.ev.on('messages.upsert', ({ messages }) => received.push(...messages));
    const id = await sendSticker(alice.id, bobJid, gif, 'image/gif');
    const got = await waitFor("bob's socket to get the sticker", () => received.find((m) => m.key.id === id));
    expect(got.message?.stickerMessage).toMatchObject({ isAnimated: true, mimetype: 'image/webp' });

    const stored = await storedOn(bob.id, id, 'bob to store the animated sticker media', (m) => m.mediaId !== undefined);
    const media = await fetch(`${api.url}/accounts/${bob.id}/messages/${stored.messageId}/media`);
    const bytes = Buffer.from(await media.arrayBuffer());
    expect(await sharp(bytes, { animated: true }).metadata()).toMatchObject({
      format: 'webp',
      pages: 3,
      width: 512,
      pageHeight: 512,
      delay: [100, 100, 100],
      hasAlpha: true,
    });
    // The 300×150 frames are letterboxed: the top-left corner is transparent, the centre is not.
    const pixel = (left: number, top: number) => sharp(bytes).extract({ left, top, width: 1, height: 1 }).raw().toBuffer();
    expect([...(await pixel(0, 0))].at(3)).toBe(0);
    const [red, green, blue, alpha] = [...(await pixel(256, 256))];
    // WebP is lossy: the first frame's red, within a few levels.
    expect({ red: red! > 240, green: green! < 16, blue: blue! < 16, alpha }).toEqual({ red: true, green: true, blue: true, alpha: 255 });
  });

  it('edit: the text changes on both sides', async () => {
    const id = await send(alice.id, 'message/send', { to: bobJid, message: 'see you at 5' });
    await storedOn(bob.id, id);
    const { status, body } = await api.call('POST', `/accounts/${alice.id}/message/edit`, {
      to: bobJid,
      messageId: id,
      message: 'see you at 6',
    });
    expect({ status, body }).toEqual({ status: 200, body: { ok: true, message: 'Message edited' } });
    expect(await storedOn(bob.id, id, "bob's copy edited", (m) => m.text === 'see you at 6')).toMatchObject({ text: 'see you at 6' });
    expect((await findMessage(gw.table, alice.id, id))?.text).toBe('see you at 6');
  });

  it('forward: a stored text and a stored image go to another chat, the image with its bytes', async () => {
    const text = await send(alice.id, 'message/send', { to: bobJid, message: 'forward me' });
    const forwarded = await send(alice.id, 'message/forward', { to: carolJid, messageId: text });
    const got = await carolGot(forwarded);
    expect(got.message?.extendedTextMessage?.text ?? got.message?.conversation).toBe('forward me');
    expect(got.message?.extendedTextMessage?.contextInfo?.isForwarded).toBe(true);

    const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
      .jpeg()
      .toBuffer();
    const image = await carol.sock!.sendMessage(aliceJid, { image: jpeg, caption: 'pic' });
    await storedOn(alice.id, image!.key.id!, 'alice to store the image', (m) => m.mediaId !== undefined);
    const again = await send(alice.id, 'message/forward', { to: bobJid, messageId: image!.key.id! });
    const onBob = await storedOn(bob.id, again, 'bob to store the forwarded image', (m) => m.mediaId !== undefined);
    expect(onBob).toMatchObject({ type: 'image', caption: 'pic' });
    const media = await fetch(`${api.url}/accounts/${bob.id}/messages/${again}/media`);
    expect(Buffer.from(await media.arrayBuffer()).equals(jpeg)).toBe(true);
  });

  it('read: unreadCount goes to 0 and the sender sees its messages read', async () => {
    const first = await carol.sock!.sendMessage(bobJid, { text: 'one' });
    const second = await carol.sock!.sendMessage(bobJid, { text: 'two' });
    await storedOn(bob.id, second!.key.id!);
    await storedOn(bob.id, first!.key.id!);
    // The chat's put may wait a moment for company after the rows (docs/guarantees.md).
    await waitFor('the chat to count both', async () => (await findChat(gw.table, bob.id, carolJid))?.unreadCount === 2);
    const { status } = await api.call('POST', `/accounts/${bob.id}/chats/${carolJid}/read`);
    expect(status).toBe(200);
    expect((await findChat(gw.table, bob.id, carolJid))?.unreadCount).toBe(0);
    const READ = proto.WebMessageInfo.Status.READ;
    expect(await carol.waitForStatus(first!.key.id!, READ)).toBeGreaterThanOrEqual(READ);
    expect(await carol.waitForStatus(second!.key.id!, READ)).toBeGreaterThanOrEqual(READ);
  });

  it('presence: typing and paused through the API are seen by the raw client', async () => {
    const seen: string[] = [];
    carol.sock!.ev.on('presence.update', ({ id, presences }) => {
      if (id === aliceJid) for (const presence of Object.values(presences)) seen.push(presence.lastKnownPresence);
    });
    expect((await api.call('POST', `/accounts/${alice.id}/presence`, { chatId: carolJid, state: 'typing' })).status).toBe(200);
    await waitFor('carol to see alice typing', () => seen.includes('composing'));
    expect((await api.call('POST', `/accounts/${alice.id}/presence`, { chatId: carolJid, state: 'paused' })).status).toBe(200);
    // Baileys reports `paused` as available.
    await waitFor('carol to see alice stop typing', () => seen.at(-1) === 'available');
    expect(seen).toEqual(['composing', 'available']);
  });
  it('presence: available and unavailable through the API reach a subscriber, under the name set on the phone', async () => {
    // The phone's first history sync names the account (connector/session/push-name.ts).
    const creds = () => gw.connector.registry.get(alice.id)?.socket?.authState.creds;
    await waitFor('alice to learn its push name', () => creds()?.me?.name === alice.pushName);
    const seen: string[] = [];
    carol.sock!.ev.on('presence.update', ({ id, presences }) => {
      if (id === aliceJid) for (const presence of Object.values(presences)) seen.push(presence.lastKnownPresence);
    });
    await carol.sock!.presenceSubscribe(aliceJid);
    expect((await api.call('POST', `/accounts/${alice.id}/presence`, { chatId: carolJid, state: 'available' })).status).toBe(200);
    await waitFor('carol to see alice online', () => seen.at(-1) === 'available');
    expect((await api.call('POST', `/accounts/${alice.id}/presence`, { chatId: carolJid, state: 'unavailable' })).status).toBe(200);
    await waitFor('carol to see alice offline', () => seen.at(-1) === 'unavailable');
  });
});
