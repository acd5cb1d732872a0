import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { linkClient, type SandboxClient } from '../sandbox/support/sandbox-client.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * Paced sends end to end (docs/sending.md#paced-sends), measured where they land: a raw Baileys
 * phone on the sandbox records when each message and each "typing…" arrives. Gaps are small here
 * (300–400 ms) so that the suite stays quick; the one rolling-minute test waits out its minute.
 */
const GAP = { min: 300, max: 400 };
/** Arrival times at the phone carry the network's jitter on top of the gap the connector kept. */
const JITTER_MS = 100;

describe('paced sends', { timeout: 240_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  let carol: SandboxClient;
  const carolPhone = '15550800009';
  const carolJid = `${carolPhone}@s.whatsapp.net`;
  /** When carol's phone saw "typing…" from each sender. */
  const typing: { from: string; at: number }[] = [];

  const paced = (change: Record<string, unknown> = {}) => ({
    sendPolicy: { enabled: true, gapMs: GAP, typing: false, warmup: false, ...change },
  });

  async function link(id: string, phone: string, settings: Record<string, unknown>) {
    await gw.control.createPhone(phone);
    const from = gw.logs.lines.length;
    const created = await api.call('POST', '/accounts', { id, settings });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await gw.linkAccount(id, phone, { logsFrom: from });
    // A first message each way, so that the later sends are not first messages to a new chat.
    await gw.control.sendFromPhone(carolPhone, phone, `hello ${id}`);
    await waitFor(`${id}'s chat with carol`, async () => (await api.call('GET', `/accounts/${id}/chats`)).body.chats);
  }

  const send = (accountId: string, message: string, headers: Record<string, string> = {}) =>
    api.call('POST', `/accounts/${accountId}/message/send`, { to: carolJid, message }, headers);
  const sendAsync = (accountId: string, message: string, headers: Record<string, string> = {}) =>
    send(accountId, message, { prefer: 'respond-async', ...headers });
  const outbox = async (accountId: string) =>
    (await api.call('GET', `/accounts/${accountId}/outbox`)).body.sends as Record<string, unknown>[];
  const arrived = (messageId: string) => waitFor(`${messageId} on the phone`, () => carol.receivedAt.get(messageId), { timeoutMs: 90_000 });
  const statusEvents = (messageId: string) =>
    gw.webhooks.posts
      .filter((p) => p.headers['x-webhook-event'] === 'message.status' && (p.body as { messageId?: string }).messageId === messageId)
      .map((p) => (p.body as { status: string }).status);

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    const registered = await api.call('POST', '/webhooks', { url: gw.webhooks.url, events: ['message.status'] });
    expect([200, 201]).toContain(registered.status);
    carol = await linkClient(gw.sandbox, carolPhone, { pushName: 'Carol' });
    const sock = carol.sock;
    if (!sock) throw new Error('carol has no socket');
    sock.ev.on('presence.update', ({ id, presences }) => {
      for (const presence of Object.values(presences))
        if (presence.lastKnownPresence === 'composing') typing.push({ from: id, at: Date.now() });
    });
  }, 120_000);
  afterAll(async () => {
    await carol?.stop();
    await api?.close();
    await gw?.stop();
  });

  it('async sends: 202 with notBefore at once; they reach the phone in order, each gap at least the drawn minimum; queued then sent events', async () => {
    await link('pacealice', '15550800001', paced());
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await sendAsync('pacealice', `paced ${i}`));
    const answeredAt = Date.now();
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      expect(answer.body).toMatchObject({ ok: true, status: 'queued', messageId: expect.any(String), notBefore: expect.any(Number) });
      expect(answer.headers.get('preference-applied')).toBe('respond-async');
    }
    const ids = answers.map((a) => String(a.body.messageId));
    const notBefores = answers.map((a) => Number(a.body.notBefore));
    expect([...notBefores].sort((a, b) => a - b)).toEqual(notBefores);
    const times = [];
    for (const id of ids) times.push(await arrived(id));
    // Answered without waiting for the sends: the last one needs four gaps after the first.
    expect(answeredAt).toBeLessThan(times[4] as number);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(GAP.min - JITTER_MS);
    // At the connector, exactly: each pause since the last send ended is at least the one drawn for it.
    const handedLines = () => gw.logs.lines.filter((l) => l.msg === 'paced send handed to WhatsApp' && ids.includes(String(l.messageId)));
    // The line comes once the send is recorded, after it reached the phone. A gap is logged for a
    // send that was queued before the one ahead of it ended (not the first; in practice all others).
    await waitFor('the five sends logged', () => handedLines().length === 5);
    const gaps = handedLines().filter((l) => l.gapMs !== undefined);
    expect(gaps.length).toBeGreaterThanOrEqual(2);
    for (const line of gaps) {
      expect(Number(line.gapDrawnMs)).toBeGreaterThanOrEqual(GAP.min);
      expect(Number(line.gapDrawnMs)).toBeLessThanOrEqual(GAP.max);
      expect(Number(line.gapMs)).toBeGreaterThanOrEqual(Number(line.gapDrawnMs));
    }
    expect([...carol.receivedAt.keys()].filter((id) => ids.includes(id))).toEqual(ids);
    for (const id of ids) await waitFor(`${id}: queued, then sent`, () => statusEvents(id).includes('sent') && statusEvents(id));
    expect(statusEvents(ids[0] as string)[0]).toBe('queued');
    expect(await outbox('pacealice')).toEqual([]);
  });

  it('a plain send waits for its turn within its deadline and answers 200; with typing, "typing…" reaches the phone first', async () => {
    await link('pacebob', '15550800002', paced({ typing: true }));
    const first = await send('pacebob', 'one');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const start = Date.now();
    const second = await send('pacebob', 'two');
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    // "typing…" for at least 1 s before a text: the gap (300–400 ms) is shorter, so the send waited for it.
    expect(Date.now() - start).toBeGreaterThanOrEqual(1_000 - JITTER_MS);
    const at = await arrived(String(second.body.messageId));
    const typed = typing.filter((t) => t.from.startsWith('15550800002') && t.at < at);
    expect(typed.length).toBeGreaterThanOrEqual(2);
    expect(at - (typed[typed.length - 1] as { at: number }).at).toBeGreaterThanOrEqual(1_000 - JITTER_MS);
  });

  it('a cancelled send never reaches the phone; a cancel after it started is 409, of an unknown send 404', async () => {
    await link('pacecarl', '15550800003', paced({ gapMs: { min: 2_000, max: 2_000 } }));
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(String((await sendAsync('pacecarl', `maybe ${i}`)).body.messageId));
    const listed = await outbox('pacecarl');
    expect(listed.map((s) => s.messageId)).toEqual(ids.slice(listed.length === 3 ? 0 : 1));
    expect(listed.at(-1)).toMatchObject({
      to: carolJid,
      type: 'text',
      status: 'queued',
      notBefore: expect.any(Number),
      createdAt: expect.any(String),
    });
    const cancelled = await api.call('DELETE', `/accounts/pacecarl/outbox/${ids[2]}`);
    expect(cancelled).toMatchObject({ status: 200, body: { ok: true, message: 'Send cancelled' } });
    expect((await api.call('DELETE', `/accounts/pacecarl/outbox/${ids[2]}`)).body).toEqual({ ok: false, error: 'Send not found' });
    expect((await outbox('pacecarl')).map((s) => s.messageId)).not.toContain(ids[2]);
    await arrived(ids[0] as string);
    expect((await api.call('DELETE', `/accounts/pacecarl/outbox/${ids[0]}`)).body).toEqual({ ok: false, error: 'Send already started' });
    await arrived(ids[1] as string);
    await waitFor('the outbox to be empty', async () => (await outbox('pacecarl')).length === 0);
    // The gap after the second send has passed twice over: the cancelled one would have gone by now.
    const after = Date.now();
    await waitFor('two gaps', () => Date.now() > after + 4_000, { intervalMs: 200 });
    expect(carol.receivedAt.has(ids[2] as string)).toBe(false);
    expect((await api.call('DELETE', '/accounts/pacecarl/outbox/NOSUCHSEND1')).body).toEqual({ ok: false, error: 'Send not found' });
    expect((await api.call('DELETE', '/accounts/pacecarl/outbox/not-an-id!')).status).toBe(400);
  });

  it('a plain send whose turn comes after its deadline is refused at once (500 send rate limit, retryAfter, Retry-After) and never sent', async () => {
    await link('pacedave', '15550800004', paced({ gapMs: { min: 120_000, max: 120_000 } }));
    const first = await send('pacedave', 'the only one for two minutes');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const before = Date.now();
    const refused = await send('pacedave', 'too soon');
    expect(Date.now() - before).toBeLessThan(2_000);
    expect(refused.status).toBe(500);
    expect(refused.body).toMatchObject({ ok: false, error: 'internal_error', detail: 'send rate limit' });
    const retryAfter = Number(refused.body.retryAfter);
    expect(retryAfter).toBeGreaterThan(100);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(refused.headers.get('retry-after')).toBe(String(retryAfter));
    expect(await outbox('pacedave')).toEqual([]);
    // Async, it is queued instead: its limits allow it now (notBefore leaves its gap out), the gap holds it.
    const queued = await sendAsync('pacedave', 'in its turn');
    expect(queued.status).toBe(202);
    expect(Number(queued.body.notBefore)).toBeLessThanOrEqual(Date.now());
    expect((await outbox('pacedave')).map((s) => s.messageId)).toEqual([queued.body.messageId]);
    expect((await api.call('DELETE', `/accounts/pacedave/outbox/${String(queued.body.messageId)}`)).status).toBe(200);
    expect([...carol.receivedAt.values()].length).toBeGreaterThan(0);
    expect(carol.receivedAt.has(String(refused.body.messageId))).toBe(false);
  });

  it('async with an Idempotency-Key: the replay answers the same queued send, and it goes once; a full queue answers 429', async () => {
    await link('paceeve', '15550800005', paced({ gapMs: { min: 1_000, max: 1_000 }, queueLimit: 2 }));
    const first = await sendAsync('paceeve', 'once', { 'Idempotency-Key': 'pace-once' });
    const replay = await sendAsync('paceeve', 'once', { 'Idempotency-Key': 'pace-once' });
    expect(first.status).toBe(202);
    expect(replay).toMatchObject({ status: 202, body: first.body });
    expect((await sendAsync('paceeve', 'other', { 'Idempotency-Key': 'pace-once' })).status).toBe(409);
    const second = await sendAsync('paceeve', 'second');
    expect(second.status).toBe(202);
    const third = await sendAsync('paceeve', 'third');
    // Both places may still be taken (the first may have gone already: then this one is queued).
    if (third.status === 429) expect(third.body).toEqual({ ok: false, error: 'send queue full' });
    else expect(third.status).toBe(202);
    const id = String(first.body.messageId);
    await arrived(id);
    await waitFor('the outbox to be empty', async () => (await outbox('paceeve')).length === 0);
    // Once: the phone got one message with the id (a second would be a second upsert of it).
    expect(carol.messages.filter((m) => m.key.id === id)).toHaveLength(1);
  });

  it('the rolling minute: the third send of a perMinute of 2 is held until the first is a minute old', async () => {
    await link('pacefred', '15550800006', paced({ perMinute: 2, gapMs: { min: 0, max: 50 } }));
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const answer = await sendAsync('pacefred', `minute ${i}`);
      expect(answer.status).toBe(202);
      answers.push(answer.body as { messageId: string; notBefore: number });
    }
    const [firstSend, secondSend, thirdSend] = answers as [(typeof answers)[0], (typeof answers)[0], (typeof answers)[0]];
    // Its turn, as the API and the outbox say: a minute after the first send's.
    expect(thirdSend.notBefore - firstSend.notBefore).toBeGreaterThanOrEqual(60_000);
    const first = await arrived(firstSend.messageId);
    await arrived(secondSend.messageId);
    expect(carol.receivedAt.has(thirdSend.messageId)).toBe(false);
    // The second's queue item goes just after its send, behind it: the outbox then holds the third alone.
    const [queued] = await waitFor('the outbox to hold the third send alone', async () => {
      const sends = await outbox('pacefred');
      return sends.length === 1 ? sends : undefined;
    });
    expect(queued).toMatchObject({ messageId: thirdSend.messageId });
    expect(Number(queued?.notBefore)).toBeGreaterThanOrEqual(first - JITTER_MS + 60_000 - 1_000);
    // What comes after a minute is the limits' own suite (test/core/pacing/limits.test.ts): the
    // wait is not worth a minute of this one. Cancelled, it never goes.
    expect((await api.call('DELETE', `/accounts/pacefred/outbox/${thirdSend.messageId}`)).status).toBe(200);
    expect(await outbox('pacefred')).toEqual([]);
    expect(carol.receivedAt.has(thirdSend.messageId)).toBe(false);
  });

  it('pacing off: Prefer: respond-async is ignored and the send answers 200 at once; unknown accounts are 404', async () => {
    await link('paceoff', '15550800007', { sendPolicy: { enabled: false } });
    // A paced account of the same shard queue with a send held for two minutes holds up nobody.
    const held = await sendAsync('pacedave', 'held for its gap');
    expect(held.status).toBe(202);
    const before = Date.now();
    const answer = await sendAsync('paceoff', 'unpaced');
    expect(answer.status).toBe(200);
    expect(Date.now() - before).toBeLessThan(5_000);
    expect((await api.call('DELETE', `/accounts/pacedave/outbox/${String(held.body.messageId)}`)).status).toBe(200);
    expect(answer.body).toEqual({ ok: true, messageId: expect.any(String) });
    expect(await outbox('paceoff')).toEqual([]);
    expect((await api.call('GET', '/accounts/nosuchpace/outbox')).body).toEqual({ ok: false, error: 'Account not found' });
    expect((await api.call('DELETE', '/accounts/nosuchpace/outbox/ABC')).status).toBe(404);
    expect((await sendAsync('nosuchpace', 'x')).status).toBe(404);
  });
});
