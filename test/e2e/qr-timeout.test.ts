import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QR_ROUNDS } from '../../connector/session/reconnect-policy.js';
import type { TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import type { Gateway } from './support/gateway.js';
import { startEventGateway, type CollectedEvents } from './support/webhook-events.js';

/** Each QR lives this long here (WhatsApp's are 60 s, then 20 s), so unscanned rounds run out quickly. */
const QR_TIMEOUT_MS = 300;

/**
 * An account nobody links: a `qr` event for every QR of every round, then the session gives up
 * with `not_started` (`qr_timeout`), which is also its lastDisconnect (docs/webhooks.md).
 */
describe('an unscanned QR', { timeout: 180_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  let collected: CollectedEvents;
  const carol = { id: 'qrcarol', phone: '15550600003' };

  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ gw, api, collected, stop } = await startEventGateway({ qrTimeoutMs: QR_TIMEOUT_MS }));
  });
  afterAll(async () => {
    await stop?.();
  });

  it(`gives a qr event per QR for ${MAX_QR_ROUNDS} rounds, then not_started (qr_timeout)`, async () => {
    await gw.control.createPhone(carol.phone);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: carol.id })).status).toBe(201);
    const given = await collected.status(carol.id, 'not_started', 'qr_timeout', 0);
    expect(given.body).toMatchObject({ previousStatus: 'connecting' });

    const logged = gw.logs.linesSince(from, (l) => l.accountId === carol.id && l.event === 'qr').map((l) => l.qr);
    const qrEvents = await waitFor('a qr event for every logged QR', () => {
      const found = collected.events.filter((e) => e.accountId === carol.id && e.event === 'qr');
      return found.length === logged.length ? found : undefined;
    });
    expect(new Set(qrEvents.map((e) => e.body.qr))).toEqual(new Set(logged));
    expect(new Set(qrEvents.map((e) => e.eventId)).size).toBe(qrEvents.length);
    for (const event of qrEvents) expect(event.body.expiresAt).toBe(Number(event.body.timestamp) + QR_TIMEOUT_MS);
    // Rounds that ran out and were retried left the status `connecting`: no event for them.
    expect(collected.events.filter((e) => e.accountId === carol.id && e.event === 'session.status')).toEqual([given]);

    await waitFor('lastDisconnect qr_timeout on the account', async () => {
      const account = (await api.call('GET', `/accounts/${carol.id}`)).body.account as Record<string, unknown>;
      return (
        account.status === 'not_started' &&
        JSON.stringify(account.lastDisconnect) === JSON.stringify({ reason: 'qr_timeout', at: given.body.timestamp })
      );
    });
    expect((await api.call('GET', `/accounts/${carol.id}`)).body.account).toMatchObject({ hasQR: false });
  });
});
