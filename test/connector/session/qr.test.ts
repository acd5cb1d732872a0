import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCommandId } from '../../../core/ids.js';
import { qrMatrix } from '../../../core/qr-image.js';
import { createAccount } from '../../../core/store/accounts.js';
import { findQr } from '../../../core/store/qr.js';
import { createApp } from '../../../functions/app.js';
import { FIRST_QR_LIFETIME_MS } from '../../../connector/session/qr-log.js';
import { startGateway, type Gateway } from '../../e2e/support/gateway.js';
import { waitFor } from '../../support/wait.js';
import { modulesOfPng } from '../../support/png-modules.js';

/**
 * Linking without reading the log: the connector publishes the QR Baileys emits, the API serves
 * it, the phone scans what the API served, and the QR is withdrawn once connected.
 */
describe('the QR over HTTP, against the sandbox', { timeout: 180_000 }, () => {
  let gw: Gateway;
  const account = { id: 'qrcarol', phone: '15550100031' };

  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('GET /accounts/:id/qr serves the QR of the log; the phone scans it; then 404 No QR code available', async () => {
    const app = createApp({ config: gw.config, clients: gw.stack.clients, logger: pino({ level: 'silent' }) });
    await gw.control.createPhone(account.phone);
    await createAccount(gw.table, { id: account.id, collectionName: `auth_${account.id}`, status: 'connecting' });
    const from = gw.logs.lines.length;
    const before = Date.now();
    await gw.queues.sendCommand({ type: 'connect', accountId: account.id, commandId: newCommandId(), payload: {} });
    const logged = await gw.logs.waitForQr(account.id, { from });

    const served = await waitFor('the QR over HTTP', async () => {
      const response = await app.request(`/accounts/${account.id}/qr`);
      return response.status === 200 ? ((await response.json()) as { ok: boolean; qr: string; expiresAt: number }) : undefined;
    });
    expect(served).toEqual({ ok: true, qr: logged, expiresAt: expect.any(Number) });
    // The first QR of a connection lives 60 s from the moment it was stored.
    expect(served.expiresAt).toBeGreaterThanOrEqual(before + FIRST_QR_LIFETIME_MS);
    expect(served.expiresAt).toBeLessThanOrEqual(Date.now() + FIRST_QR_LIFETIME_MS);

    const png = await app.request(`/accounts/${account.id}/qr?format=png`);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(modulesOfPng(Buffer.from(await png.arrayBuffer()))).toEqual(qrMatrix(logged));

    await gw.control.scan(account.phone, served.qr);
    await gw.waitForStatus(account.id, 'connected');
    await waitFor('the QR to be withdrawn', async () => (await findQr(gw.table, account.id)) === undefined);
    const after = await app.request(`/accounts/${account.id}/qr`);
    expect({ status: after.status, body: await after.json() }).toEqual({
      status: 404,
      body: { ok: false, error: 'No QR code available' },
    });
  });
});
