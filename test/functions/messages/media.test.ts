import { request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getBuffer, listKeys, mediaStoreOf, putStream, type MediaStore } from '../../../core/media-store.js';
import type { Command } from '../../../core/schemas/command.js';
import { updateAccountStatus } from '../../../core/store/accounts.js';
import { putMedia } from '../../../core/store/media.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import type { FakeConnector } from '../../support/fake-connector.js';
import { fixtures } from '../../support/media-fixtures.js';
import { startApiStack, startTestApi, type TestApi } from '../../support/test-api.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

const TO = '15551234567@s.whatsapp.net';
const MB = 1024 * 1024;

// Live memory, not garbage awaiting collection: collect before each sample.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const liveMemory = () => {
  collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};

let stack: TestStack;
let api: TestApi;
let connector: FakeConnector;
let stopStack: (() => Promise<void>) | undefined;
let table: Table;
let media: MediaStore;
let counter = 0;

async function connectedAccount(target: { api: typeof api; table: Table } = { api, table }): Promise<string> {
  const id = `media${Date.now().toString(36)}${counter++}`;
  expect((await target.api.call('POST', '/accounts', { id })).status).toBe(201);
  await updateAccountStatus(target.table, id, { status: 'connected' });
  return id;
}

async function upload(accountId: string, kind: string, fields: Record<string, string>, file?: { bytes: Buffer; name: string }) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append(kind, new Blob([new Uint8Array(file.bytes)]), file.name);
  const response = await fetch(`${api.url}/accounts/${accountId}/message/send/${kind}`, { method: 'POST', body: form });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  ({ stack, api, connector, stop: stopStack } = await startApiStack());
  table = tableOf(stack.config, stack.clients);
  media = mediaStoreOf(stack.config, stack.clients);
});
afterAll(async () => {
  await stopStack?.();
});

const sendMediaOf = (accountId: string) => (c: Command) => c.type === 'send_media' && c.accountId === accountId;

describe('media sends', () => {
  it('image: 200 {ok, messageId}; the file is in S3 under the account and the command points at it', async () => {
    const id = await connectedAccount();
    const { status, body } = await upload(id, 'image', { to: TO, caption: 'look' }, { bytes: fixtures.png, name: 'a.png' });
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['messageId', 'ok']);
    const command = await connector.waitFor(sendMediaOf(id));
    expect(command.payload).toMatchObject({
      messageId: body.messageId,
      to: TO,
      kind: 'image',
      mimetype: 'image/png',
      caption: 'look',
      fileName: 'a.png',
      size: fixtures.png.length,
    });
    const key = command.type === 'send_media' ? command.payload.s3Key : '';
    expect(key).toMatch(new RegExp(`^accounts/${id}/uploads/[0-9a-f]{32}$`));
    expect(await getBuffer(media, key)).toEqual(fixtures.png);
  });

  it('accepts every type of the spec table', async () => {
    const id = await connectedAccount();
    const cases: Array<[string, Buffer, string, string]> = [
      ['image', fixtures.jpeg, 'a.jpg', 'image/jpeg'],
      ['image', fixtures.gif, 'a.gif', 'image/gif'],
      ['video', fixtures.mp4, 'a.mp4', 'video/mp4'],
      ['video', fixtures.webm, 'a.webm', 'video/webm'],
      ['audio', fixtures.mp3, 'a.mp3', 'audio/mpeg'],
      ['audio', fixtures.m4a, 'a.m4a', 'audio/mp4'],
      ['audio', fixtures.ogg, 'a.ogg', 'audio/ogg; codecs=opus'],
      ['audio', fixtures.wav, 'a.wav', 'audio/wav'],
      ['document', fixtures.pdf, 'a.pdf', 'application/pdf'],
      ['document', fixtures.text, 'a.csv', 'text/csv'],
    ];
    for (const [kind, bytes, name, mimetype] of cases) {
      const { status, body } = await upload(id, kind, { to: TO }, { bytes, name });
      expect({ name, status, body }).toMatchObject({ name, status: 200, body: { ok: true } });
      const command = await connector.waitFor(
        (c) => c.type === 'send_media' && c.accountId === id && c.payload.messageId === body.messageId,
      );
      expect({ name, mimetype: command.type === 'send_media' ? command.payload.mimetype : '' }).toEqual({ name, mimetype });
    }
  });

  it('audio: ptt=false/0 asks for a plain audio file, ptt=true/1 for a voice note, absent leaves the default', async () => {
    const id = await connectedAccount();
    const sent: Array<unknown> = [];
    const pttFields: Array<Record<string, string>> = [{ ptt: 'false' }, { ptt: 'true' }, {}, { ptt: '0' }, { ptt: '1' }];
    for (const fields of pttFields) {
      const { status, body } = await upload(id, 'audio', { to: TO, ...fields }, { bytes: fixtures.ogg, name: 'v.ogg' });
      expect(status).toBe(200);
      const command = await connector.waitFor(
        (c) => c.type === 'send_media' && c.accountId === id && c.payload.messageId === body.messageId,
      );
      sent.push(command.type === 'send_media' ? command.payload.ptt : 'not media');
    }
    expect(sent).toEqual([false, true, undefined, false, true]);
  });

  it('audio: any other ptt value is 400, nothing kept', async () => {
    const id = await connectedAccount();
    for (const ptt of ['yes', 'no', '', '2']) {
      expect(await upload(id, 'audio', { to: TO, ptt }, { bytes: fixtures.ogg, name: 'v.ogg' })).toEqual({
        status: 400,
        body: { ok: false, error: 'ptt must be true, false, 1 or 0' },
      });
    }
    expect(await listKeys(media, `accounts/${id}/`)).toEqual([]);
  });

  it('a file whose bytes are not an accepted type: 400 naming the accepted types, nothing kept', async () => {
    const id = await connectedAccount();
    expect(await upload(id, 'image', { to: TO }, { bytes: fixtures.pdf, name: 'fake.png' })).toEqual({
      status: 400,
      body: { ok: false, error: 'image must be a JPG, PNG or GIF file' },
    });
    expect((await upload(id, 'video', { to: TO }, { bytes: fixtures.png, name: 'x.mp4' })).body.error).toBe(
      'video must be an MP4 or WebM file',
    );
    expect((await upload(id, 'audio', { to: TO }, { bytes: fixtures.exe, name: 'x.mp3' })).status).toBe(400);
    expect((await upload(id, 'document', { to: TO }, { bytes: fixtures.exe, name: 'x.pdf' })).status).toBe(400);
    expect(await listKeys(media, `accounts/${id}/`)).toEqual([]);
  });

  it('missing file or to: 400 naming both; a bad JID: 400; the upload is removed', async () => {
    const id = await connectedAccount();
    expect(await upload(id, 'image', { to: TO })).toEqual({
      status: 400,
      body: { ok: false, error: 'image and to are required' },
    });
    expect(await upload(id, 'document', {}, { bytes: fixtures.pdf, name: 'a.pdf' })).toEqual({
      status: 400,
      body: { ok: false, error: 'document and to are required' },
    });
    expect(await upload(id, 'image', { to: 'nobody' }, { bytes: fixtures.png, name: 'a.png' })).toEqual({
      status: 400,
      body: { ok: false, error: 'to must be a valid JID' },
    });
    expect(await listKeys(media, `accounts/${id}/`)).toEqual([]);
  });

  it('not multipart: 400', async () => {
    const id = await connectedAccount();
    const { status, body } = await api.call('POST', `/accounts/${id}/message/send/image`, { to: TO });
    expect(status).toBe(400);
    expect(body).toEqual({ ok: false, error: 'Request body must be multipart/form-data' });
  });

  it('account not connected: the request is judged first (400 with its own message), a valid one is 500 internal_error; nothing stored or enqueued', async () => {
    const id = `media${Date.now().toString(36)}${counter++}`;
    await api.call('POST', '/accounts', { id });
    const cases: Array<[string, Record<string, string>, { bytes: Buffer; name: string } | undefined, string]> = [
      ['image', { to: TO }, undefined, 'image and to are required'],
      ['image', { to: TO }, { bytes: fixtures.pdf, name: 'fake.png' }, 'image must be a JPG, PNG or GIF file'],
      ['document', {}, { bytes: fixtures.pdf, name: 'a.pdf' }, 'document and to are required'],
      ['image', { to: 'nobody' }, { bytes: fixtures.png, name: 'a.png' }, 'to must be a valid JID'],
      ['audio', { to: TO, ptt: 'maybe' }, { bytes: fixtures.ogg, name: 'v.ogg' }, 'ptt must be true, false, 1 or 0'],
    ];
    for (const [kind, fields, file, error] of cases) {
      expect({ error, ...(await upload(id, kind, fields, file)) }).toEqual({ error, status: 400, body: { ok: false, error } });
    }
    const valid = await upload(id, 'image', { to: TO }, { bytes: fixtures.png, name: 'a.png' });
    expect(valid.status).toBe(500);
    expect(valid.body).toMatchObject({ ok: false, error: 'internal_error' });
    expect(String(valid.body.detail)).toMatch(/connecting, not connected/);
    expect(await listKeys(media, `accounts/${id}/`)).toEqual([]);
    expect(connector.commands.some((c) => c.type === 'send_media' && c.accountId === id)).toBe(false);
  });

  it('unknown account: 404 Account not found whatever the body (no file, wrong type, no to)', async () => {
    const id = `nosuch${Date.now().toString(36)}${counter++}`;
    for (const [fields, file] of [
      [{ to: TO }, undefined],
      [{ to: TO }, { bytes: fixtures.pdf, name: 'fake.png' }],
      [{}, { bytes: fixtures.png, name: 'a.png' }],
    ] as const) {
      expect(await upload(id, 'image', fields, file)).toEqual({ status: 404, body: { ok: false, error: 'Account not found' } });
    }
    const notMultipart = await api.call('POST', `/accounts/${id}/message/send/image`, { to: TO });
    expect(notMultipart).toMatchObject({ status: 404, body: { ok: false, error: 'Account not found' } });
  });
});

/**
 * Streams `size` bytes of a multipart file from one reused 64 KB chunk (the client holds no
 * copy), stops writing once the server answers, and samples this process's memory meanwhile
 * (the API and the S3 emulator run here too).
 */
function bigUpload(apiUrl: string, accountId: string, size: number, withLength: boolean) {
  const boundary = 'bigboundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="to"\r\n\r\n${TO}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 7);
  fixtures.png.copy(chunk);
  const headers: Record<string, string | number> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  if (withLength) headers['content-length'] = head.length + size + tail.length;

  const url = new URL(`${apiUrl}/accounts/${accountId}/message/send/image`);
  return new Promise<{ status: number; body: Record<string, unknown>; peakGrowth: number }>((resolve, reject) => {
    const baseline = liveMemory();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, liveMemory());
    }, 200);
    let answered = false;
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        clearInterval(sampler);
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(parts).toString()) as Record<string, unknown>,
          peakGrowth: peak - baseline,
        });
      });
    });
    // The server may close the socket while we are still writing: that is the refusal working.
    req.on('error', (error) => {
      if (!answered) {
        clearInterval(sampler);
        reject(error);
      }
    });
    let sent = 0;
    req.write(head);
    const pump = () => {
      while (!answered && sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end(tail);
    };
    pump();
  });
}

describe('upload size limit', () => {
  // Memory is measured in this process, so these emulators (whose S3 holds the parts it
  // receives) run in a child process: what is counted is the API's own memory.
  const limited = (maxBytes?: number) => {
    const target = {} as { stack: TestStack; api: typeof api; table: Table };
    beforeAll(async () => {
      target.stack = await startTestStack({
        separateProcess: true,
        ...(maxBytes ? { overrides: { MAX_UPLOAD_BYTES: String(maxBytes) } } : {}),
      });
      target.api = await startTestApi(target.stack);
      target.table = tableOf(target.stack.config, target.stack.clients);
    });
    afterAll(async () => {
      await target.api?.close();
      await target.stack?.stop();
    });
    return target;
  };

  describe('at the default 50 MB', () => {
    const target = limited();

    it('51 MB with Content-Length: 413 File too large (max 50 MB) without reading it into memory', async () => {
      const id = await connectedAccount(target);
      const result = await bigUpload(target.api.url, id, 51 * MB, true);
      expect(result.status).toBe(413);
      expect(result.body).toEqual({ ok: false, error: 'File too large (max 50 MB)' });
      expect(result.peakGrowth).toBeLessThan(8 * MB);
    });

    it('51 MB chunked (no Content-Length): 413 once 50 MB have passed, nothing kept in S3', async () => {
      const id = await connectedAccount(target);
      const result = await bigUpload(target.api.url, id, 51 * MB, false);
      expect(result.status).toBe(413);
      expect(result.body).toEqual({ ok: false, error: 'File too large (max 50 MB)' });
      expect(await listKeys(mediaStoreOf(target.stack.config, target.stack.clients), `accounts/${id}/`)).toEqual([]);
    }, 180_000);
  });

  describe('at a 150 MB limit', () => {
    const target = limited(150 * MB);

    it('151 MB chunked: streamed, so memory stays far below the file size (multipart parts only)', async () => {
      const id = await connectedAccount(target);
      const result = await bigUpload(target.api.url, id, 151 * MB, false);
      expect(result.status).toBe(413);
      expect(result.body).toEqual({ ok: false, error: 'File too large (max 150 MB)' });
      // A few 5 MB parts in flight (S3's minimum part size), never the 150 MB read so far.
      expect(result.peakGrowth).toBeLessThan(64 * MB);
    }, 180_000);
  });
});

describe('GET /accounts/:id/messages/:id/media', () => {
  it('by mediaId and by the id of a message with media: the bytes with Content-Type and Content-Length', async () => {
    const id = await connectedAccount();
    const s3Key = `accounts/${id}/media/m0123`;
    await putStream(media, s3Key, fixtures.jpeg, { contentType: 'image/jpeg' });
    await putMedia(table, id, { mediaId: 'm0123', messageId: 'IMG1', s3Key, mimetype: 'image/jpeg', size: fixtures.jpeg.length });
    await putMessage(table, id, {
      messageId: 'IMG1',
      from: TO,
      chatId: TO,
      timestamp: 5,
      type: 'image',
      fromMe: false,
      hasMedia: true,
      mediaId: 'm0123',
    });
    for (const ref of ['m0123', 'IMG1']) {
      const response = await fetch(`${api.url}/accounts/${id}/messages/${ref}/media`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/jpeg');
      expect(response.headers.get('content-length')).toBe(String(fixtures.jpeg.length));
      expect(Buffer.from(await response.arrayBuffer())).toEqual(fixtures.jpeg);
    }
  });

  it('unknown message: 404 Message not found; message without media: 404 No media in message', async () => {
    const id = await connectedAccount();
    await putMessage(table, id, { messageId: 'TXT1', from: TO, chatId: TO, timestamp: 5, type: 'text', fromMe: false, text: 'x' });
    expect(await api.call('GET', `/accounts/${id}/messages/NOPE/media`)).toMatchObject({
      status: 404,
      body: { ok: false, error: 'Message not found' },
    });
    expect(await api.call('GET', `/accounts/${id}/messages/TXT1/media`)).toMatchObject({
      status: 404,
      body: { ok: false, error: 'No media in message' },
    });
  });

  it('stored file missing: 500 internal_error', async () => {
    const id = await connectedAccount();
    await putMedia(table, id, { mediaId: 'gone1', messageId: 'X', s3Key: `accounts/${id}/media/gone1`, mimetype: 'image/png', size: 1 });
    expect(await api.call('GET', `/accounts/${id}/messages/gone1/media`)).toMatchObject({
      status: 500,
      body: { ok: false, error: 'internal_error' },
    });
  });
});

describe('media sends with an Idempotency-Key', () => {
  async function uploadWithKey(accountId: string, key: string, bytes: Buffer) {
    const form = new FormData();
    form.append('to', TO);
    form.append('image', new Blob([new Uint8Array(bytes)]), 'a.img');
    const response = await fetch(`${api.url}/accounts/${accountId}/message/send/image`, {
      method: 'POST',
      body: form,
      headers: { 'Idempotency-Key': key },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('the same file again: the first answer, one send; other file bytes under the key: 409', async () => {
    const id = await connectedAccount();
    const first = await uploadWithKey(id, 'photo-1', fixtures.png);
    expect(first.status).toBe(200);
    expect(await uploadWithKey(id, 'photo-1', fixtures.png)).toEqual(first);
    expect(await uploadWithKey(id, 'photo-1', fixtures.jpeg)).toEqual({
      status: 409,
      body: { ok: false, error: 'Idempotency-Key reused with a different request' },
    });
    expect(connector.commands.filter(sendMediaOf(id))).toHaveLength(1);
  });
});
