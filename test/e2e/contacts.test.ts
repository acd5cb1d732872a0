import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCommandId } from '../../core/ids.js';
import { isFinalGroupRequestStatus } from '../../core/schemas/group.js';
import { groupRequests } from '../../core/store/group-requests.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * The number check and the profile picture end to end: a gateway account asks the sandbox (usync
 * `contact`, `w:profile:picture`) about a phone that exists there and one that does not.
 */
describe('contacts through the API and the sandbox', { timeout: 120_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  const alice = { id: 'ctalice', phone: '15550900001' };
  const knownPhone = '15550900002';
  const unknownPhone = '15550900999';

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    await gw.control.createPhone(alice.phone);
    await gw.control.createPhone(knownPhone);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: alice.id })).status).toBe(201);
    await gw.linkAccount(alice.id, alice.phone, { logsFrom: from });
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
  });

  it('a number on WhatsApp exists with its JID; one that is not does not', async () => {
    const known = await api.call('GET', `/accounts/${alice.id}/contacts/+${knownPhone}/exists`);
    expect(known.status, JSON.stringify(known.body)).toBe(200);
    expect(known.body).toEqual({ ok: true, exists: true, jid: `${knownPhone}@s.whatsapp.net` });
    const unknown = await api.call('GET', `/accounts/${alice.id}/contacts/${unknownPhone}/exists`);
    expect(unknown.body).toEqual({ ok: true, exists: false });
  });

  it("gives a known JID's picture URL, and null for an unknown one", async () => {
    const known = await api.call('GET', `/accounts/${alice.id}/contacts/${knownPhone}@s.whatsapp.net/picture`);
    expect(known.status, JSON.stringify(known.body)).toBe(200);
    expect(known.body).toEqual({
      ok: true,
      url: expect.stringMatching(new RegExp(`^https://127\\.0\\.0\\.1:\\d+/pp/${knownPhone}\\.jpg$`)),
    });
    const unknown = await api.call('GET', `/accounts/${alice.id}/contacts/${unknownPhone}@s.whatsapp.net/picture`);
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(200);
    expect(unknown.body).toEqual({ ok: true, url: null });
  });

  it('still runs a number check sent the old way, as a `group` command (an API from before `socket_query`)', async () => {
    const commandId = newCommandId();
    await groupRequests.putPending(gw.table, alice.id, { commandId }, Date.now() + gw.config.SEND_TIMEOUT_MS);
    await gw.queues.sendCommand({ type: 'group', accountId: alice.id, commandId, payload: { op: 'contact_exists', phone: knownPhone } });
    const request = await waitFor('the old-style look-up to be answered', async () => {
      const found = await groupRequests.find(gw.table, alice.id, commandId);
      return found && isFinalGroupRequestStatus(found.status) ? found : undefined;
    });
    expect(request).toMatchObject({ status: 'done', answer: { exists: true, jid: `${knownPhone}@s.whatsapp.net` } });
  });
});
