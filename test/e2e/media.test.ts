import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountObjectPrefix, mediaObjectKey } from '../../core/keys.js';
import { listKeys, mediaStoreOf } from '../../core/media-store.js';
import type { Message } from '../../core/schemas/message.js';
import { findMessage } from '../../core/store/messages.js';
import { createFixtureDir, generateTone, generateVideo } from '../connector/media/fixtures.js';
import { startTestApi } from '../support/test-api.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * Media end to end: a file sent through the HTTP API by one account arrives on the other
 * account over the sandbox network, is stored there, and its media endpoint serves it.
 */
describe('media through the API', () => {
  let gw: Gateway;
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let fixtures: Awaited<ReturnType<typeof createFixtureDir>>;
  const alice = { id: 'mediaalice', phone: '15550300001' };
  const bob = { id: 'mediabob', phone: '15550300002' };
  const bobJid = `${bob.phone}@s.whatsapp.net`;

  async function link(account: { id: string; phone: string }) {
    await gw.control.createPhone(account.phone);
    const from = gw.logs.lines.length;
    const created = await api.call('POST', '/accounts', { id: account.id });
    expect(created.status).toBe(201);
    await gw.linkAccount(account.id, account.phone, { logsFrom: from });
  }

  /** POSTs a multipart send as a client would; returns the new message id. */
  async function sendMedia(
    kind: string,
    file: Buffer,
    fileName: string,
    type: string,
    caption?: string,
    extraFields: Record<string, string> = {},
  ): Promise<string> {
    const form = new FormData();
    form.set('to', bobJid);
    form.set(kind, new Blob([new Uint8Array(file)], { type }), fileName);
    if (caption) form.set('caption', caption);
    for (const [name, value] of Object.entries(extraFields)) form.set(name, value);
    const response = await fetch(`${api.url}/accounts/${alice.id}/message/send/${kind}`, { method: 'POST', body: form });
    const body = (await response.json()) as { ok: boolean; messageId?: string; error?: string; detail?: string };
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true });
    expect(response.status).toBe(200);
    return body.messageId!;
  }

  /** Waits for bob's stored copy with its media, then downloads it through the API. */
  async function receivedOnBob(messageId: string): Promise<{ message: Message; bytes: Buffer; headers: Headers }> {
    const message = await waitFor('bob to store the media message', async () => {
      const found = await findMessage(gw.table, bob.id, messageId);
      return found?.mediaId ? found : undefined;
    });
    const response = await fetch(`${api.url}/accounts/${bob.id}/messages/${message.mediaId}/media`);
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    return { message, bytes, headers: response.headers };
  }

  beforeAll(async () => {
    fixtures = await createFixtureDir();
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    await link(alice);
    await link(bob);
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
    await fixtures?.remove();
  });

  it('image: arrives with caption and the media endpoint returns the original bytes', async () => {
    const png = await sharp({ create: { width: 200, height: 120, channels: 3, background: '#22aa66' } })
      .png()
      .toBuffer();
    const messageId = await sendMedia('image', png, 'green.png', 'image/png', 'a green picture');
    const { message, bytes, headers } = await receivedOnBob(messageId);
    expect(message).toMatchObject({
      type: 'image',
      hasMedia: true,
      caption: 'a green picture',
      fromMe: false,
      chatId: `${alice.phone}@s.whatsapp.net`,
    });
    expect(bytes.equals(png)).toBe(true);
    expect(headers.get('content-type')).toBe('image/png');
    expect(headers.get('content-length')).toBe(String(png.length));
  });

  it('video: an MP4 arrives unchanged, with its duration', async () => {
    const path = join(fixtures.dir, 'clip.mp4');
    await generateVideo(path, 2);
    const mp4 = await readFile(path);
    const messageId = await sendMedia('video', mp4, 'clip.mp4', 'video/mp4', 'a clip');
    const { message, bytes, headers } = await receivedOnBob(messageId);
    expect(message).toMatchObject({ type: 'video', caption: 'a clip', seconds: 2 });
    expect(bytes.equals(mp4)).toBe(true);
    expect(headers.get('content-type')).toBe('video/mp4');
  });

  it('audio: an MP3 arrives as a voice note in OGG/Opus', async () => {
    const path = join(fixtures.dir, 'tone.mp3');
    await generateTone(path, 2);
    const messageId = await sendMedia('audio', await readFile(path), 'tone.mp3', 'audio/mpeg');
    const { message, bytes, headers } = await receivedOnBob(messageId);
    expect(message).toMatchObject({ type: 'audio', ptt: true, seconds: 2, mimetype: 'audio/ogg; codecs=opus' });
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(bytes.indexOf('OpusHead')).toBeGreaterThan(0);
    expect(headers.get('content-type')).toBe('audio/ogg; codecs=opus');
    expect(headers.get('content-length')).toBe(String(bytes.length));
  });

  it('audio with ptt=false: arrives as a plain audio file (ptt false), OGG/Opus in stereo', async () => {
    const path = join(fixtures.dir, 'plain.mp3');
    await generateTone(path, 2);
    const messageId = await sendMedia('audio', await readFile(path), 'plain.mp3', 'audio/mpeg', undefined, { ptt: 'false' });
    const { message, bytes } = await receivedOnBob(messageId);
    expect(message).toMatchObject({ type: 'audio', ptt: false, seconds: 2, mimetype: 'audio/ogg; codecs=opus' });
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(bytes[bytes.indexOf('OpusHead') + 9]).toBe(2);
  });

  it('document: arrives with its file name and mimetype, bytes unchanged', async () => {
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
    const messageId = await sendMedia('document', pdf, 'report.pdf', 'application/pdf', 'the report');
    const { message, bytes, headers } = await receivedOnBob(messageId);
    expect(message).toMatchObject({ type: 'document', fileName: 'report.pdf', mimetype: 'application/pdf', hasMedia: true });
    expect(bytes.equals(pdf)).toBe(true);
    expect(headers.get('content-type')).toBe('application/pdf');
  });

  it("the sender's own copy is stored as fromMe with its media, the one copy kept: each upload goes once its send is settled", async () => {
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#aa2266' } })
      .png()
      .toBuffer();
    const messageId = await sendMedia('image', png, 'red.png', 'image/png');
    const own = await waitFor('alice to store her sent message', async () => {
      const found = await findMessage(gw.table, alice.id, messageId);
      return found?.mediaId ? found : undefined;
    });
    expect(own).toMatchObject({ fromMe: true, type: 'image', from: `${alice.phone}@s.whatsapp.net`, chatId: bobJid });
    const response = await fetch(`${api.url}/accounts/${alice.id}/messages/${messageId}/media`);
    expect(Buffer.from(await response.arrayBuffer()).equals(png)).toBe(true);
    // Six files sent by alice in this suite: six objects, all the stored copies of her messages.
    const store = mediaStoreOf(gw.stack.config, gw.stack.clients);
    const kept = await waitFor('the uploads to be deleted', async () => {
      const keys = await listKeys(store, accountObjectPrefix(alice.id));
      return keys.some((key) => key.includes('/uploads/')) ? undefined : keys;
    });
    expect(kept).toHaveLength(6);
    expect(kept).toContain(mediaObjectKey(alice.id, own.mediaId ?? ''));
  });
});
