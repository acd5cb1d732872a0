import { request } from 'node:http';
import { connect } from 'node:net';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listKeys, mediaStoreOf, type MediaStore } from '../../../core/media-store.js';
import { updateAccountStatus } from '../../../core/store/accounts.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { fixtures } from '../../support/media-fixtures.js';
import { startTestApi } from '../../support/test-api.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

/**
 * Bad uploads against a real server and real Node clients: every one gets its 4xx answer, even
 * when the answer comes while the client is still sending (the connection is closed cleanly
 * after it), and none leaves anything in S3.
 */
const TO = '15551234567@s.whatsapp.net';
const MB = 1024 * 1024;
const BOUNDARY = 'testboundary';

let stack: TestStack;
let api: Awaited<ReturnType<typeof startTestApi>>;
let table: Table;
let media: MediaStore;
let counter = 0;

beforeAll(async () => {
  stack = await startTestStack();
  table = tableOf(stack.config, stack.clients);
  media = mediaStoreOf(stack.config, stack.clients);
  api = await startTestApi(stack);
});
afterAll(async () => {
  await api?.close();
  await stack?.stop();
});

async function connectedAccount(): Promise<string> {
  const id = `upl${Date.now().toString(36)}${counter++}`;
  expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
  await updateAccountStatus(table, id, { status: 'connected' });
  return id;
}

/** Objects and unfinished multipart uploads under the account's prefix. */
async function leftInS3(accountId: string): Promise<string[]> {
  const prefix = `accounts/${accountId}/`;
  const uploads = await stack.clients.s3.send(new ListMultipartUploadsCommand({ Bucket: media.bucket, Prefix: prefix }));
  const unfinished = (uploads.Uploads ?? []).map((u) => `unfinished upload of ${u.Key}`).filter((u) => u.includes(prefix));
  return [...(await listKeys(media, prefix)), ...unfinished];
}

function filePartHead(field: string, fileName: string, fields: Record<string, string> = { to: TO }): Buffer {
  let text = '';
  for (const [name, value] of Object.entries(fields)) {
    text += `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  text += `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${fileName}"\r\n\r\n`;
  return Buffer.from(text);
}
const closing = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

interface Answer {
  status: number;
  body: Record<string, unknown>;
  connection: string | undefined;
}

interface BigBody {
  head: Buffer;
  /** Bytes after head, from one reused 64 KB chunk that starts with `fileStart`. */
  size: number;
  fileStart: Buffer;
  tail: Buffer;
  withLength: boolean;
  contentType?: string;
}

/** node:http, as most clients behave: sends until the answer arrives, then stops. */
function postWithNodeClient(path: string, big: BigBody): Promise<Answer> {
  const chunk = Buffer.alloc(64 * 1024, 7);
  big.fileStart.copy(chunk);
  const headers: Record<string, string | number> = {
    'content-type': big.contentType ?? `multipart/form-data; boundary=${BOUNDARY}`,
  };
  if (big.withLength) headers['content-length'] = big.head.length + big.size + big.tail.length;
  const url = new URL(`${api.url}${path}`);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(parts).toString()) as Record<string, unknown>,
          connection: res.headers.connection,
        }),
      );
    });
    // An error before the answer is what must never happen (a reset under the answer).
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    let sent = 0;
    req.write(big.head);
    const pump = () => {
      while (!answered && sent < big.size) {
        const n = Math.min(chunk.length, big.size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end(big.tail);
    };
    pump();
  });
}

/** A plain socket that sends the whole request whatever comes back, then reads the answer. */
function postIgnoringEarlyAnswer(path: string, big: BigBody): Promise<Answer> {
  const url = new URL(`${api.url}${path}`);
  const chunk = Buffer.alloc(64 * 1024, 7);
  big.fileStart.copy(chunk);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const received: Buffer[] = [];
    socket.on('data', (data: Buffer) => received.push(data));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const connection = /\r\nconnection: ([^\r]+)/i.exec(head)?.[1];
      try {
        resolve({ status, body: JSON.parse(body) as Record<string, unknown>, connection });
      } catch {
        reject(new Error(`no complete answer: ${JSON.stringify(text.slice(0, 300))}`));
      }
    });
    socket.on('connect', async () => {
      const length = big.head.length + big.size + big.tail.length;
      socket.write(
        `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n` +
          `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n`,
      );
      socket.write(big.head);
      for (let sent = 0; sent < big.size && !socket.destroyed; ) {
        const n = Math.min(chunk.length, big.size - sent);
        sent += n;
        if (!socket.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          await new Promise((drained) => socket.once('drain', drained));
        }
      }
      socket.end(big.tail);
    });
  });
}

const tooLargeBody = { ok: false, error: 'File too large (max 50 MB)' };

describe('an answer given while the client is still uploading reaches it', () => {
  it('60 MB with Content-Length, five times in a row: 413 File too large (max 50 MB) each time, then Connection: close', async () => {
    const id = await connectedAccount();
    for (let run = 0; run < 5; run++) {
      const answer = await postWithNodeClient(`/accounts/${id}/message/send/image`, {
        head: filePartHead('image', 'big.png'),
        size: 60 * MB,
        fileStart: fixtures.png,
        tail: closing,
        withLength: true,
      });
      expect({ run, ...answer }).toEqual({ run, status: 413, body: tooLargeBody, connection: 'close' });
    }
    expect(await leftInS3(id)).toEqual([]);
  });

  it('a client that ignores the early answer and sends all 60 MB still reads its 413', async () => {
    const id = await connectedAccount();
    for (let run = 0; run < 3; run++) {
      const answer = await postIgnoringEarlyAnswer(`/accounts/${id}/message/send/video`, {
        head: filePartHead('video', 'big.mp4'),
        size: 60 * MB,
        fileStart: fixtures.mp4,
        tail: closing,
        withLength: true,
      });
      expect({ run, ...answer }).toEqual({ run, status: 413, body: tooLargeBody, connection: 'close' });
    }
  });

  it('unknown account with a 60 MB upload: 404 Account not found, every time', async () => {
    for (let run = 0; run < 3; run++) {
      const answer = await postWithNodeClient(`/accounts/nosuch${counter++}/message/send/image`, {
        head: filePartHead('image', 'big.png'),
        size: 60 * MB,
        fileStart: fixtures.png,
        tail: closing,
        withLength: true,
      });
      expect({ run, ...answer }).toEqual({ run, status: 404, body: { ok: false, error: 'Account not found' }, connection: 'close' });
    }
  });

  it('a 30 MB PDF sent as an image: 400 from its first bytes, nothing stored', async () => {
    const id = await connectedAccount();
    for (const withLength of [true, false]) {
      const answer = await postWithNodeClient(`/accounts/${id}/message/send/image`, {
        head: filePartHead('image', 'fake.png'),
        size: 30 * MB,
        fileStart: fixtures.pdf,
        tail: closing,
        withLength,
      });
      expect({ withLength, ...answer }).toEqual({
        withLength,
        status: 400,
        body: { ok: false, error: 'image must be a JPG, PNG or GIF file' },
        connection: 'close',
      });
    }
    expect(await leftInS3(id)).toEqual([]);
  });

  it('a bad field sent ahead of a 30 MB file: 400 when the file starts (while the client still sends), nothing stored', async () => {
    const id = await connectedAccount();
    const cases: Array<[string, Record<string, string>, string]> = [
      ['image', { to: 'nobody' }, 'to must be a valid JID'],
      ['audio', { to: TO, ptt: 'yes' }, 'ptt must be true, false, 1 or 0'],
    ];
    for (const [kind, fields, error] of cases) {
      const answer = await postWithNodeClient(`/accounts/${id}/message/send/${kind}`, {
        head: filePartHead(kind, 'big.bin', fields),
        size: 30 * MB,
        fileStart: kind === 'audio' ? fixtures.ogg : fixtures.png,
        tail: closing,
        withLength: true,
      });
      // Connection: close shows the answer left before the body was read to its end.
      expect({ kind, ...answer }).toEqual({ kind, status: 400, body: { ok: false, error }, connection: 'close' });
    }
    expect(await leftInS3(id)).toEqual([]);
  });

  it('chunked (no Content-Length) over 50 MB: 413 once the limit passes; no object and no unfinished multipart upload left', async () => {
    const id = await connectedAccount();
    const answer = await postWithNodeClient(`/accounts/${id}/message/send/image`, {
      head: filePartHead('image', 'big.png'),
      size: 51 * MB,
      fileStart: fixtures.png,
      tail: closing,
      withLength: false,
    });
    expect(answer).toMatchObject({ status: 413, body: tooLargeBody });
    expect(await leftInS3(id)).toEqual([]);
  }, 180_000);
});

describe('malformed multipart: 400 with a clear error, never 500, never a hang', () => {
  async function postRaw(path: string, contentType: string, body: Buffer): Promise<Answer> {
    const response = await fetch(`${api.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      connection: response.headers.get('connection') ?? undefined,
    };
  }
  const wellFormed = Buffer.concat([filePartHead('image', 'a.png'), fixtures.png, closing]);

  it('multipart/form-data without a boundary: 400 naming it, on every media send', async () => {
    const id = await connectedAccount();
    for (const kind of ['image', 'video', 'audio', 'document']) {
      const answer = await postRaw(`/accounts/${id}/message/send/${kind}`, 'multipart/form-data', wellFormed);
      expect({ kind, status: answer.status, body: answer.body }).toEqual({
        kind,
        status: 400,
        body: { ok: false, error: 'multipart/form-data needs a boundary in its Content-Type' },
      });
    }
  });

  it('a body that ends before its closing boundary: 400 Malformed multipart body, nothing stored', async () => {
    const id = await connectedAccount();
    const truncated = Buffer.concat([filePartHead('image', 'a.png'), fixtures.png]);
    expect(await postRaw(`/accounts/${id}/message/send/image`, `multipart/form-data; boundary=${BOUNDARY}`, truncated)).toMatchObject({
      status: 400,
      body: { ok: false, error: 'Malformed multipart body: Unexpected end of form' },
    });
    expect(await leftInS3(id)).toEqual([]);
  });

  it('a part with malformed headers: 400 Malformed multipart body', async () => {
    const id = await connectedAccount();
    const body = Buffer.from(`--${BOUNDARY}\r\nthis is not a header\r\n\r\nxx\r\n--${BOUNDARY}--\r\n`);
    expect(await postRaw(`/accounts/${id}/message/send/image`, `multipart/form-data; boundary=${BOUNDARY}`, body)).toMatchObject({
      status: 400,
      body: { ok: false, error: 'Malformed multipart body: Malformed part header' },
    });
  });

  it('a boundary that never appears in the body: 400', async () => {
    const id = await connectedAccount();
    const answer = await postRaw(`/accounts/${id}/message/send/image`, 'multipart/form-data; boundary=elsewhere', wellFormed);
    expect(answer.status).toBe(400);
    expect(String(answer.body.error)).toMatch(/^Malformed multipart body: |^image and to are required$/);
  });

  it('a client that disconnects in the middle of a 20 MB file leaves nothing in S3, and the server keeps serving', async () => {
    const id = await connectedAccount();
    const url = new URL(`${api.url}/accounts/${id}/message/send/image`);
    const chunk = Buffer.alloc(64 * 1024, 7);
    fixtures.png.copy(chunk);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, async () => {
        socket.write(
          `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n` +
            `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${40 * MB}\r\n\r\n`,
        );
        socket.write(filePartHead('image', 'big.png'));
        for (let sent = 0; sent < 20 * MB; sent += chunk.length) {
          if (!socket.write(chunk)) await new Promise((drained) => socket.once('drain', drained));
        }
        // The file is on its way to S3 when the client goes.
        await expect.poll(() => leftInS3(id), { timeout: 30_000, interval: 100 }).not.toEqual([]);
        socket.destroy();
        resolve();
      });
      socket.on('error', () => undefined);
    });
    await expect.poll(() => leftInS3(id), { timeout: 30_000, interval: 200 }).toEqual([]);
    expect((await api.call('GET', '/ping')).status).toBe(200);
  });
});
