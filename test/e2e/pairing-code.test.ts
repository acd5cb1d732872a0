import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi } from '../support/test-api.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * Linking by pairing code through the API: the code comes from POST /accounts/:id/pairing-code,
 * the sandbox's phone enters it (its control API's POST /pair), and the account connects as
 * after a QR scan.
 */
describe('pairing code end to end', { timeout: 180_000 }, () => {
  let gw: Gateway;
  let api: Awaited<ReturnType<typeof startTestApi>>;
  const peer = { phone: '15550410009', jid: '15550410009@s.whatsapp.net' };

  /** A code of the right shape that is not `code`. */
  const otherCodeThan = (code: string) => (code.startsWith('AAAA') ? 'BBBBBBBB' : 'AAAAAAAA');

  async function createAccount(id: string, phone: string) {
    await gw.control.createPhone(phone);
    const created = await api.call('POST', '/accounts', { id });
    expect(created.status).toBe(201);
  }

  async function requestCode(id: string, phoneNumber: string) {
    const response = await api.call('POST', `/accounts/${id}/pairing-code`, { phoneNumber });
    expect(response.body, JSON.stringify(response.body)).toMatchObject({ ok: true });
    expect(response.status).toBe(200);
    return response.body as { ok: true; code: string; expiresAt: number };
  }

  async function statusOf(id: string) {
    return (await api.call('GET', `/accounts/${id}`)).body.account as Record<string, unknown>;
  }

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    await gw.control.createPhone(peer.phone);
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
  });

  it('pairing code, entered on the phone: connected, then a text each way', async () => {
    const carol = { id: 'carol', phone: '15550410001', jid: '15550410001@s.whatsapp.net' };
    await createAccount(carol.id, carol.phone);
    const from = gw.logs.lines.length;
    const before = Date.now();

    const { code, expiresAt } = await requestCode(carol.id, '+1 555-041-0001');
    expect(code).toMatch(/^[A-Z0-9]{8}$/);
    expect(expiresAt).toBeGreaterThan(before);
    const logged = gw.logs.linesSince(from, (l) => l.event === 'pairing_code' && l.accountId === carol.id);
    expect(logged.map((l) => l.pairingCode)).toEqual([code]);
    expect(logged[0]?.level).toBe(30);

    const linked = await gw.control.pair(carol.phone, code);
    expect(linked).toEqual({ status: 200, body: { ok: true, jid: `${carol.phone}:1@s.whatsapp.net`, device: 1 } });
    await gw.waitForStatus(carol.id, 'connected');
    expect(await statusOf(carol.id)).toMatchObject({ status: 'connected', hasQR: false });

    const sent = await api.call('POST', `/accounts/${carol.id}/message/send`, { to: peer.jid, message: 'linked by code' });
    expect(sent.body, JSON.stringify(sent.body)).toMatchObject({ ok: true });
    await waitFor('the peer phone to receive the text', async () =>
      (await gw.control.inbox(peer.phone)).some((m) => m.text === 'linked by code'),
    );

    await gw.control.sendFromPhone(peer.phone, carol.jid, 'hello code-linked carol');
    await waitFor('carol to store the text', async () => {
      const messages = await api.call('GET', `/accounts/${carol.id}/chats/${encodeURIComponent(peer.jid)}/messages`);
      const list = (messages.body.messages ?? []) as Array<Record<string, unknown>>;
      return list.some((m) => m.message === 'hello code-linked carol' || m.text === 'hello code-linked carol');
    });

    const again = await api.call('POST', `/accounts/${carol.id}/pairing-code`, { phoneNumber: carol.phone });
    expect(again).toMatchObject({ status: 400, body: { ok: false, error: 'Account is already connected' } });
  });

  it('a wrong code: the account stays unlinked, and the right code still links it', async () => {
    const erin = { id: 'erin', phone: '15550410002' };
    await createAccount(erin.id, erin.phone);
    const { code } = await requestCode(erin.id, erin.phone);

    const wrong = await gw.control.pair(erin.phone, otherCodeThan(code));
    expect(wrong).toEqual({ status: 400, body: { ok: false, error: 'wrong code' } });
    expect(await gw.control.devices(erin.phone)).toEqual([]);
    expect((await statusOf(erin.id)).status).toBe('connecting');

    const right = await gw.control.pair(erin.phone, code);
    expect(right.status).toBe(200);
    await gw.waitForStatus(erin.id, 'connected');
  });

  it('an account not started is started for the code; a code never entered does not log it out', async () => {
    const gina = { id: 'gina', phone: '15550410004' };
    await createAccount(gina.id, gina.phone);
    expect((await api.call('POST', `/accounts/${gina.id}/disconnect`)).status).toBe(200);
    await gw.waitForStatus(gina.id, 'not_started');

    const { code } = await requestCode(gina.id, gina.phone);
    expect((await statusOf(gina.id)).status).toBe('connecting');

    // The socket that asked for the code goes away with it (the connector restarts): the next
    // one must register afresh, not log in with the number the code request wrote into the creds.
    const from = gw.logs.lines.length;
    await gw.restartConnector();
    const qr = await gw.logs.waitForQr(gina.id, { from });
    expect(gw.logs.linesSince(from, (l) => l.accountId === gina.id && l.status === 'logged_out')).toEqual([]);
    expect((await gw.control.pair(gina.phone, code)).status).toBe(404);
    await gw.control.scan(gina.phone, qr);
    await gw.waitForStatus(gina.id, 'connected');
  });

  it('bad phoneNumber: 400 before anything is asked; unknown account: 404', async () => {
    const frank = { id: 'frank', phone: '15550410003' };
    await createAccount(frank.id, frank.phone);
    const error = { ok: false, error: 'phoneNumber must be digits with country code' };
    for (const body of [
      {},
      { phoneNumber: '' },
      { phoneNumber: '+1 (555) 041-0003' },
      { phoneNumber: 'call me' },
      { phoneNumber: 15550410003 },
    ]) {
      const response = await api.call('POST', `/accounts/${frank.id}/pairing-code`, body);
      expect({ status: response.status, body: response.body }, JSON.stringify(body)).toEqual({ status: 400, body: error });
    }
    const unknown = await api.call('POST', '/accounts/nobody/pairing-code', { phoneNumber: 'bad' });
    expect(unknown).toMatchObject({ status: 404, body: { ok: false, error: 'Account not found' } });
  });
});
