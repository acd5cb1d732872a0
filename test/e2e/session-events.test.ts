import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookBody } from '../../core/schemas/webhook-event.js';
import { FIRST_QR_LIFETIME_MS } from '../../connector/session/qr-log.js';
import type { TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import type { Gateway } from './support/gateway.js';
import { startEventGateway, type CollectedEvents } from './support/webhook-events.js';

/**
 * Session health as webhook events (docs/webhooks.md): every change of an account's status is
 * one `session.status` event with its reason, every QR a `qr` event, and the latest disconnect
 * is on the account. The sandbox's kicks send what WhatsApp sends; the events are read from the
 * webhook queue (no delivery worker runs), the account through the HTTP API.
 *
 * A story in order: one account lives through each kind of kick, the link comes first.
 */
describe('story: session.status and qr events through kicks, disconnect and logout', { timeout: 240_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  let collected: CollectedEvents;
  const alice = { id: 'healthalice', phone: '15550600001' };
  const bob = { id: 'healthbob', phone: '15550600002' };
  const events = () => collected.events;
  const statusEvent = (accountId: string, status: string, reason: string, from: number) =>
    collected.status(accountId, status, reason, from);

  async function account(accountId: string): Promise<Record<string, unknown>> {
    const response = await api.call('GET', `/accounts/${accountId}`);
    expect(response.status).toBe(200);
    return response.body.account as Record<string, unknown>;
  }

  /** Waits until GET /accounts/:id shows that status and that latest disconnect. */
  async function waitForAccount(accountId: string, status: string, lastDisconnect: { reason: string; at: unknown }) {
    await waitFor(`${accountId} to be ${status} with lastDisconnect ${lastDisconnect.reason}`, async () => {
      const current = await account(accountId);
      return current.status === status && JSON.stringify(current.lastDisconnect) === JSON.stringify(lastDisconnect);
    });
  }

  async function linkedDevice(phone: string): Promise<number> {
    const [device] = (await gw.control.devices(phone)).filter((d) => d.device !== 0);
    expect(device).toBeDefined();
    return device!.device;
  }

  async function link(who: { id: string; phone: string }): Promise<void> {
    await gw.control.createPhone(who.phone);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: who.id })).status).toBe(201);
    await gw.linkAccount(who.id, who.phone, { logsFrom: from });
  }

  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ gw, api, collected, stop } = await startEventGateway());
  });
  afterAll(async () => {
    await stop?.();
  });

  it('a new QR is a qr event with the raw QR and its expiry; the scan gives connected (connected)', async () => {
    const from = events().length;
    await gw.control.createPhone(alice.phone);
    const logFrom = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: alice.id })).status).toBe(201);
    const qr = await gw.logs.waitForQr(alice.id, { from: logFrom });
    const qrEvent = await waitFor('the qr event', () =>
      events()
        .slice(from)
        .find((e) => e.accountId === alice.id && e.event === 'qr'),
    );
    expect(qrEvent.body.qr).toBe(qr);
    expect(webhookBody(qrEvent)).toEqual({
      event: 'qr',
      accountId: alice.id,
      qr,
      expiresAt: Number(qrEvent.body.timestamp) + FIRST_QR_LIFETIME_MS,
      timestamp: qrEvent.body.timestamp,
    });
    // The same expiry as the QR route answers.
    const served = await api.call('GET', `/accounts/${alice.id}/qr`);
    expect(served.body).toMatchObject({ ok: true, qr, expiresAt: qrEvent.body.expiresAt });

    await gw.control.scan(alice.phone, qr);
    const connected = await statusEvent(alice.id, 'connected', 'connected', from);
    expect(webhookBody(connected)).toEqual({
      event: 'session.status',
      accountId: alice.id,
      status: 'connected',
      previousStatus: 'connecting',
      reason: 'connected',
      timestamp: connected.body.timestamp,
    });
    expect(connected.eventId).toMatch(new RegExp(`^${alice.id}:session:\\d+:\\d+$`));
    // A link is not a disconnect, and `connecting` to `connecting` across the pairing restart is no change.
    expect((await account(alice.id)).lastDisconnect).toBeUndefined();
    expect(events().filter((e) => e.accountId === alice.id && e.event === 'session.status')).toHaveLength(1);
  });

  it.each([
    ['restart', 'restart_required'],
    ['conflict', 'replaced'],
    ['end', 'connection_lost'],
  ])('kick %s: reconnecting (%s), then connected again; lastDisconnect has the reason', async (kind, reason) => {
    const from = events().length;
    await gw.control.kick(alice.phone, await linkedDevice(alice.phone), kind);
    const down = await statusEvent(alice.id, 'reconnecting', reason, from);
    expect(down.body).toMatchObject({ previousStatus: 'connected' });
    const up = await statusEvent(alice.id, 'connected', 'connected', from);
    expect(up.body).toMatchObject({ previousStatus: 'reconnecting' });
    expect(Number(up.body.timestamp)).toBeGreaterThanOrEqual(Number(down.body.timestamp));
    await waitForAccount(alice.id, 'connected', { reason, at: down.body.timestamp });
    expect(down.eventId).not.toBe(up.eventId);
  });

  it('the disconnect route: not_started (stopped); connect resumes without a QR event', async () => {
    const from = events().length;
    expect((await api.call('POST', `/accounts/${alice.id}/disconnect`)).body).toMatchObject({ ok: true });
    const stopped = await statusEvent(alice.id, 'not_started', 'stopped', from);
    expect(stopped.body).toMatchObject({ previousStatus: 'connected' });
    await waitForAccount(alice.id, 'not_started', { reason: 'stopped', at: stopped.body.timestamp });

    const again = events().length;
    expect((await api.call('POST', `/accounts/${alice.id}/connect`)).body).toMatchObject({ ok: true });
    const connected = await statusEvent(alice.id, 'connected', 'connected', again);
    // From `connecting`, or through `reconnecting` when a busy machine dropped the first try.
    expect(['connecting', 'reconnecting']).toContain(connected.body.previousStatus);
    expect(
      events()
        .slice(again)
        .filter((e) => e.accountId === alice.id && e.event === 'qr'),
    ).toEqual([]);
    // Connecting again is no disconnect: the last one stays.
    expect((await account(alice.id)).lastDisconnect).toEqual({ reason: 'stopped', at: stopped.body.timestamp });
  });

  it('a connector shutdown hands the account on: reconnecting (connection_lost); the next connector resumes it: connected', async () => {
    const from = events().length;
    await gw.restartConnector();
    const handedOn = await statusEvent(alice.id, 'reconnecting', 'connection_lost', from);
    expect(handedOn.body).toMatchObject({ previousStatus: 'connected' });
    const resumed = await statusEvent(alice.id, 'connected', 'connected', from);
    expect(resumed.body).toMatchObject({ previousStatus: 'reconnecting' });
    await waitForAccount(alice.id, 'connected', { reason: 'connection_lost', at: handedOn.body.timestamp });
  });

  it('kick logout (401 device_removed): logged_out (logged_out)', async () => {
    const from = events().length;
    await gw.control.kick(alice.phone, await linkedDevice(alice.phone), 'logout');
    const loggedOut = await statusEvent(alice.id, 'logged_out', 'logged_out', from);
    expect(loggedOut.body).toMatchObject({ previousStatus: 'connected' });
    await waitForAccount(alice.id, 'logged_out', { reason: 'logged_out', at: loggedOut.body.timestamp });
  });

  it('the disconnect route on a logged-out account (no session anywhere): not_started (stopped) all the same', async () => {
    await waitFor('the session to leave the registry', () => !gw.connector.registry.get(alice.id));
    const from = events().length;
    expect((await api.call('POST', `/accounts/${alice.id}/disconnect`)).body).toMatchObject({ ok: true });
    const stopped = await statusEvent(alice.id, 'not_started', 'stopped', from);
    expect(stopped.body).toMatchObject({ previousStatus: 'logged_out' });
    await waitForAccount(alice.id, 'not_started', { reason: 'stopped', at: stopped.body.timestamp });
  });

  it('kick forbidden (403, WhatsApp removed the account): logged_out (removed_by_whatsapp), in the list too', async () => {
    await link(bob);
    const from = events().length;
    await gw.control.kick(bob.phone, await linkedDevice(bob.phone), 'forbidden');
    const removed = await statusEvent(bob.id, 'logged_out', 'removed_by_whatsapp', from);
    expect(removed.body).toMatchObject({ previousStatus: 'connected' });
    await waitForAccount(bob.id, 'logged_out', { reason: 'removed_by_whatsapp', at: removed.body.timestamp });
    const listed = await api.call('GET', '/accounts');
    const accounts = listed.body.accounts as Array<Record<string, unknown>>;
    expect(accounts.find((a) => a._id === bob.id)?.lastDisconnect).toEqual({ reason: 'removed_by_whatsapp', at: removed.body.timestamp });
  });

  it('every move the sessions made was allowed, and every status change had its reason', () => {
    const complaints = gw.logs.lines.filter(
      (l) => l.msg === 'session move refused' || String(l.msg).startsWith('status changed without a reason'),
    );
    expect(complaints).toEqual([]);
  });
});
