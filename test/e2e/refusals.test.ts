import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findAccount } from '../../core/store/accounts.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { sendTextByCommand } from './support/commands.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * WhatsApp's refusals end to end (docs/sending.md#whatsapps-refusals): the sandbox
 * nacks an account's sends as WhatsApp does (`POST /limits`); the send answers 500 naming the
 * error and reaches nobody, the account's sending pauses (sendPause, `account.limit`), sends
 * during the pause are refused at once with Retry-After, and sending resumes by itself. The first
 * pause is PAUSE_MS here instead of 60 s (SEND_PAUSE_MIN_MS).
 */
const PAUSE_MS = 10_000;

describe("WhatsApp's refusals", { timeout: 240_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  const alice = { id: 'refalice', phone: '15550700001' };
  const carol = { id: 'refcarol', phone: '15550700003' };
  const bobPhone = '15550700002';
  const bobJid = `${bobPhone}@s.whatsapp.net`;

  async function link(account: { id: string; phone: string }) {
    await gw.control.createPhone(account.phone);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: account.id })).status).toBe(201);
    await gw.linkAccount(account.id, account.phone, { logsFrom: from });
  }

  const send = (accountId: string, message: string, headers: Record<string, string> = {}) =>
    api.call('POST', `/accounts/${accountId}/message/send`, { to: bobJid, message }, headers);

  const inboxIds = async () => (await gw.control.inbox(bobPhone)).map((m) => m.id);

  const account = async (accountId: string) => (await api.call('GET', `/accounts/${accountId}`)).body.account as Record<string, unknown>;

  const limitEvents = (accountId: string) =>
    gw.webhooks.posts
      .filter((p) => p.headers['x-webhook-event'] === 'account.limit' && (p.body as { accountId?: string }).accountId === accountId)
      .map((p) => p.body as { reason: string; until: number });

  /** Waits (on the clock, not a fixed sleep) until the account's pause has ended, as the API shows it. */
  async function waitForResume(accountId: string, until: number) {
    await waitFor('the pause to end', async () => Date.now() > until && (await account(accountId)).sendPause === undefined, {
      timeoutMs: until - Date.now() + 30_000,
      intervalMs: 200,
    });
  }

  beforeAll(async () => {
    gw = await startGateway({ overrides: { SEND_PAUSE_MIN_MS: String(PAUSE_MS) } });
    api = await startTestApi(gw.stack);
    const registered = await api.call('POST', '/webhooks', { url: gw.webhooks.url, events: ['account.limit'] });
    expect([200, 201]).toContain(registered.status);
    await gw.control.createPhone(bobPhone);
    await link(alice);
    await link(carol);
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
  });

  let refused = { messageId: '', body: {} as Record<string, unknown>, until: 0 };

  it('a send WhatsApp refuses with 429 answers 500 naming the error, and the account pauses with an account.limit event', async () => {
    await gw.control.limit(alice.phone, 429, 1);
    const before = Date.now();
    const answer = await send(alice.id, 'refused by WhatsApp', { 'Idempotency-Key': 'refused-429' });
    const after = Date.now();
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ ok: false, error: 'internal_error', detail: 'WhatsApp refused the send: rate_limited (429)' });

    const shown = (await account(alice.id)).sendPause as { reason: string; until: number };
    expect(shown.reason).toBe('rate_limited');
    // The first pause: SEND_PAUSE_MIN_MS from the nack, which came between the request and its answer.
    expect(shown.until).toBeGreaterThanOrEqual(before + PAUSE_MS);
    expect(shown.until).toBeLessThanOrEqual(after + PAUSE_MS);
    const listed = (await api.call('GET', '/accounts')).body.accounts as Record<string, unknown>[];
    expect(listed.find((a) => a._id === alice.id)?.sendPause).toEqual(shown);
    expect(listed.find((a) => a._id === carol.id)).not.toHaveProperty('sendPause');

    const events = await waitFor('the account.limit event', () => limitEvents(alice.id).length > 0 && limitEvents(alice.id));
    expect(events).toEqual([expect.objectContaining({ event: 'account.limit', accountId: alice.id, ...shown })]);

    // The message the account tried is stored, `failed`; its id is the answer's.
    const messages = (await api.call('GET', `/accounts/${alice.id}/chats/${bobJid}/messages`)).body.messages as Record<string, unknown>[];
    const stored = await waitFor('the refused message to be failed', async () => {
      const row = (await api.call('GET', `/accounts/${alice.id}/messages/${String(messages[0]?.messageId)}`)).body.message as
        | Record<string, unknown>
        | undefined;
      return row?.status === 'failed' ? row : undefined;
    });
    expect(stored.text).toBe('refused by WhatsApp');
    refused = { messageId: String(stored.messageId), body: answer.body, until: shown.until };
  });

  it('while paused, a send is refused at once with retryAfter and Retry-After, and a replay of the refused send answers the same 500', async () => {
    const answer = await send(alice.id, 'during the pause');
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ ok: false, error: 'internal_error', detail: 'sending paused: rate_limited' });
    const retryAfter = Number(answer.body.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(PAUSE_MS / 1000));
    expect(answer.headers.get('retry-after')).toBe(String(retryAfter));

    const replay = await send(alice.id, 'refused by WhatsApp', { 'Idempotency-Key': 'refused-429' });
    expect(replay.status).toBe(500);
    expect(replay.body).toEqual(refused.body);
  });

  it('a command that reaches the connector during the pause is refused there, from memory, with the time to retry', async () => {
    const { outbound } = await sendTextByCommand(gw, alice.id, bobJid, 'queued before the pause was seen');
    expect(outbound).toMatchObject({ status: 'failed', reason: 'sending paused: rate_limited', retryAt: refused.until });
  });

  it('sending resumes by itself at `until`; the refused message never reached the phone', async () => {
    await waitForResume(alice.id, refused.until);
    const answer = await send(alice.id, 'after the pause');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const messageId = String(answer.body.messageId);
    await waitFor('the message after the pause on the phone', async () => (await inboxIds()).includes(messageId));
    expect(await inboxIds()).not.toContain(refused.messageId);
  });

  it('463 pauses the account as reachout_timelock; a repeat soon after resuming doubles the pause, which a restart keeps', async () => {
    const patched = await api.call('PATCH', `/accounts/${carol.id}/settings`, {
      rejectCalls: true,
      callRejectMessage: 'No calls here, write instead.',
    });
    expect(patched.status).toBe(200);
    await gw.control.limit(carol.phone, 463, 2);
    const first = await send(carol.id, 'first reach-out');
    expect(first.body).toEqual({ ok: false, error: 'internal_error', detail: 'WhatsApp refused the send: reachout_timelock (463)' });
    const paused = (await account(carol.id)).sendPause as { reason: string; until: number };
    expect(paused.reason).toBe('reachout_timelock');
    await waitFor('the account.limit event', () => limitEvents(carol.id).length === 1);

    await waitForResume(carol.id, paused.until);
    const before = Date.now();
    const second = await send(carol.id, 'second reach-out');
    expect(second.status).toBe(500);
    expect(second.body.detail).toBe('WhatsApp refused the send: reachout_timelock (463)');
    const doubled = (await account(carol.id)).sendPause as { reason: string; until: number };
    expect(doubled.until).toBeGreaterThanOrEqual(before + 2 * PAUSE_MS);
    await waitFor('the second account.limit event', () => limitEvents(carol.id).length === 2);
    expect(limitEvents(carol.id)[1]).toMatchObject(doubled);

    // The pause holds every send, the call-reject message too: the call is declined, its message held.
    const { callId } = await gw.control.call(bobPhone, carol.phone);
    await waitFor('the sandbox to see the call rejected', async () =>
      (await gw.control.calls(bobPhone)).some((c) => c.callId === callId && c.status === 'rejected'),
    );
    await gw.logs.waitForLine(
      'the held call-reject message',
      (l) => l.accountId === carol.id && l.msg === 'call-reject message not sent: sending paused',
    );
    expect(Date.now()).toBeLessThan(doubled.until);
    expect((await gw.control.inbox(bobPhone)).some((m) => m.text === 'No calls here, write instead.')).toBe(false);

    // Stored with the account: a restarted connector holds the pause too.
    expect((await findAccount(gw.table, carol.id, true))?.sendPause).toMatchObject({ ...doubled, durationMs: 2 * PAUSE_MS });
    await gw.restartConnector();
    await gw.waitForStatus(carol.id, 'connected');
    const { outbound } = await sendTextByCommand(gw, carol.id, bobJid, 'after the restart');
    expect(outbound).toMatchObject({ status: 'failed', reason: 'sending paused: reachout_timelock', retryAt: doubled.until });
  });

  it('a send whose ack never comes answers 200 as before, once the ack wait is over', async () => {
    await gw.control.withholdAcks(alice.phone, 1);
    const before = Date.now();
    const answer = await send(alice.id, 'no ack for this one');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    // SEND_ACK_WAIT_MS (3 s by default) went by first.
    expect(Date.now() - before).toBeGreaterThanOrEqual(gw.config.SEND_ACK_WAIT_MS);
    const messageId = String(answer.body.messageId);
    await waitFor('the ack-less message on the phone', async () => (await inboxIds()).includes(messageId));
  });

  it('a refusal that comes after the ack wait: the send was answered 200, but the account pauses all the same', async () => {
    const eventsBefore = limitEvents(alice.id).length;
    // The nack comes a second after the connector's wait (started before the stanza left) gave up.
    await gw.control.limit(alice.phone, 429, 1, gw.config.SEND_ACK_WAIT_MS + 1_000);
    const answer = await send(alice.id, 'refused late');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const paused = await waitFor('the late pause', async () => (await account(alice.id)).sendPause as { reason: string } | undefined);
    expect(paused.reason).toBe('rate_limited');
    await waitFor('its account.limit event', () => limitEvents(alice.id).length === eventsBefore + 1);
    expect((await send(alice.id, 'during the late pause')).body.detail).toBe('sending paused: rate_limited');
  });
});
