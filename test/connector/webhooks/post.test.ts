import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { postWebhook } from '../../../connector/webhooks/post.js';

const allowLoopback = { allowPrivate: true };

/** A receiver that answers each path as told and records what reached it. */
function receiver(answer: (req: IncomingMessage) => { status: number; headers?: Record<string, string>; delayMs?: number }) {
  const seen: { path: string; headers: IncomingMessage['headers']; body: string; clientPort: number | undefined }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body, clientPort: req.socket.remotePort });
      const { status, headers, delayMs } = answer(req);
      setTimeout(() => res.writeHead(status, headers).end('a body nobody reads'), delayMs ?? 0);
    });
  });
  return { server, seen, url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}` };
}

describe('postWebhook', () => {
  const target = receiver((req) =>
    req.url === '/moved'
      ? { status: 302, headers: { location: '/elsewhere' } }
      : req.url === '/slow'
        ? { status: 200, delayMs: 1_000 }
        : req.url === '/down'
          ? { status: 503 }
          : { status: 200 },
  );
  beforeAll(() => new Promise<void>((resolve) => target.server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => target.server.close(() => resolve())));

  it('signs with both conventions: a Standard Webhooks library verifies a whsec_ secret as it is and a plain one as whsec_ + its base64; ours is kept', async () => {
    const body = '{"event":"message","text":"héllo"}';
    const plain = 'a-plain-secret-of-some-length';
    const standard = `whsec_${Buffer.from('sixteen-or-more-random-bytes').toString('base64')}`;
    for (const [secret, verifierKey] of [
      [plain, `whsec_${Buffer.from(plain, 'utf8').toString('base64')}`],
      [standard, standard],
    ] as const) {
      const from = target.seen.length;
      const answer = await postWebhook(
        target.url('/signed'),
        body,
        { eventId: 'acct:S1', event: 'message', attempt: 1, secret },
        2_000,
        allowLoopback,
      );
      expect(answer).toEqual({ ok: true, status: 200 });
      const seen = target.seen[from]!;
      const received = Object.fromEntries(Object.entries(seen.headers).map(([name, value]) => [name, String(value)]));
      expect(received['webhook-id']).toBe('acct:S1');
      // Throws on a wrong signature or an old timestamp.
      expect(new Webhook(verifierKey).verify(seen.body, received)).toEqual(JSON.parse(body));
      expect(() => new Webhook(verifierKey).verify(`${seen.body} `, received)).toThrow();
      const t = received['webhook-timestamp'];
      const ours = createHmac('sha256', secret).update(`${t}.${seen.body}`).digest('hex');
      expect(received['x-webhook-signature']).toBe(`t=${t},v1=${ours}`);
    }
  });

  it('POSTs the raw body with the webhook headers, and a 2xx is a success (the connection is reused)', async () => {
    const headers = { eventId: 'acct:M1', event: 'message', attempt: 2 };
    expect(await postWebhook(target.url('/hook'), '{"a":1}', headers, 2_000, allowLoopback)).toEqual({ ok: true, status: 200 });
    for (const n of [2, 3, 4])
      expect(await postWebhook(target.url('/hook'), `{"a":${n}}`, headers, 2_000, allowLoopback)).toEqual({ ok: true, status: 200 });
    const posts = target.seen.filter((s) => s.path === '/hook');
    const [first, second] = posts;
    expect(first).toMatchObject({
      body: '{"a":1}',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'wa-gateway-webhooks/1.0',
        'x-webhook-id': 'acct:M1',
        'x-webhook-event': 'message',
        'x-webhook-attempt': '2',
        // Standard Webhooks' id and time go out with or without a secret; no signature without one.
        'webhook-id': 'acct:M1',
        'webhook-timestamp': expect.stringMatching(/^\d{10}$/),
      },
    });
    expect(first?.headers['webhook-signature']).toBeUndefined();
    expect(first?.headers['x-webhook-signature']).toBeUndefined();
    expect(second?.body).toBe('{"a":2}');
    // Kept-alive connections: four POSTs one after the other do not open four.
    expect(new Set(posts.map((p) => p.clientPort)).size).toBeLessThan(4);
  });

  it('a redirect is a failure and is not followed; a 5xx is a failure', async () => {
    const headers = { eventId: 'acct:M2', event: 'message', attempt: 1 };
    expect(await postWebhook(target.url('/moved'), '{}', headers, 2_000, allowLoopback)).toEqual({ ok: false, reason: 'HTTP 302' });
    expect(target.seen.some((s) => s.path === '/elsewhere')).toBe(false);
    expect(await postWebhook(target.url('/down'), '{}', headers, 2_000, allowLoopback)).toEqual({ ok: false, reason: 'HTTP 503' });
  });

  it('an answer later than the timeout is a failure naming the timeout', async () => {
    const outcome = await postWebhook(target.url('/slow'), '{}', { eventId: 'acct:M3', event: 'message', attempt: 1 }, 200, allowLoopback);
    expect(outcome).toEqual({ ok: false, reason: 'timeout after 200 ms' });
  });

  it('a refused target fails permanently without a request', async () => {
    const before = target.seen.length;
    const outcome = await postWebhook(target.url('/hook'), '{}', { eventId: 'acct:M4', event: 'message', attempt: 1 }, 2_000, {
      allowPrivate: false,
    });
    expect(outcome).toMatchObject({ ok: false, permanent: true });
    expect(target.seen.length).toBe(before);
  });
});
