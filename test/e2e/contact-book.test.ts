import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChat } from '../../core/store/chats.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * The contacts an account learns as WhatsApp reports them (docs/api.md, Contacts), end to end:
 * phones of the sandbox with push names write to a linked account; the list, one contact, the
 * chat's name, the search and the paging, and the errors.
 */
describe('the contact book through the API and the sandbox', { timeout: 120_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  const alice = { id: 'cbalice', phone: '15550910001' };
  const dan = { phone: '15550910002', pushName: 'Dan Smith' };
  const bea = { phone: '15550910003', pushName: 'bea Jones' };
  const jidOf = (phone: string) => `${phone}@s.whatsapp.net`;

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    await gw.control.createPhone(alice.phone);
    await gw.control.createPhone(dan.phone, dan.pushName);
    await gw.control.createPhone(bea.phone, bea.pushName);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: alice.id })).status).toBe(201);
    await gw.linkAccount(alice.id, alice.phone, { logsFrom: from });
    await gw.control.sendFromPhone(dan.phone, alice.phone, 'hello from dan');
    await gw.control.sendFromPhone(bea.phone, alice.phone, 'hello from bea');
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
  });

  it('lists the people who wrote, with their numbers and push names, sorted by the name shown', async () => {
    const listed = await waitFor('both senders in the contact list', async () => {
      const answer = await api.call('GET', `/accounts/${alice.id}/contacts`);
      const contacts = answer.body.contacts as Array<{ jid: string }> | undefined;
      return contacts && [dan, bea].every((p) => contacts.some((c) => c.jid === jidOf(p.phone))) ? answer : undefined;
    });
    expect(listed.status).toBe(200);
    const senders = (listed.body.contacts as Array<{ jid: string }>).filter((c) => [jidOf(dan.phone), jidOf(bea.phone)].includes(c.jid));
    // Sorted without regard to case: "bea Jones" before "Dan Smith".
    expect(senders).toEqual([
      { jid: jidOf(bea.phone), phone: bea.phone, pushName: bea.pushName },
      { jid: jidOf(dan.phone), phone: dan.phone, pushName: dan.pushName },
    ]);
  });

  it('one contact by JID; a chat is named by the push name', async () => {
    const one = await api.call('GET', `/accounts/${alice.id}/contacts/${jidOf(dan.phone)}`);
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body).toEqual({ ok: true, contact: { jid: jidOf(dan.phone), phone: dan.phone, pushName: dan.pushName } });
    const chat = await waitFor("Dan's chat", () => findChat(gw.table, alice.id, jidOf(dan.phone)));
    expect(chat.name).toBe(dan.pushName);
  });

  it('q finds by part of the name or number, case aside; limit and skip page the sorted list', async () => {
    const byName = await api.call('GET', `/accounts/${alice.id}/contacts?q=SMITH`);
    expect((byName.body.contacts as Array<{ jid: string }>).map((c) => c.jid)).toEqual([jidOf(dan.phone)]);
    const byNumber = await api.call('GET', `/accounts/${alice.id}/contacts?q=0910003`);
    expect((byNumber.body.contacts as Array<{ jid: string }>).map((c) => c.jid)).toEqual([jidOf(bea.phone)]);
    const all = (await api.call('GET', `/accounts/${alice.id}/contacts`)).body.contacts as Array<{ jid: string }>;
    const second = await api.call('GET', `/accounts/${alice.id}/contacts?limit=1&skip=1`);
    expect(second.body.contacts).toEqual([all[1]]);
  });

  it('answers errors as the API does: bad paging, bad JID, unknown contact, unknown account', async () => {
    const tooMany = await api.call('GET', `/accounts/${alice.id}/contacts?limit=501`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ ok: false, error: 'limit must be an integer from 1 to 500' });
    const badJid = await api.call('GET', `/accounts/${alice.id}/contacts/not-a-jid`);
    expect(badJid.status).toBe(400);
    expect(badJid.body).toMatchObject({ ok: false, error: 'jid must be a valid JID' });
    const unknown = await api.call('GET', `/accounts/${alice.id}/contacts/15550910999@s.whatsapp.net`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ ok: false, error: 'Contact not found' });
    for (const path of ['/accounts/nosuchaccount/contacts', '/accounts/nosuchaccount/contacts/15550910002@s.whatsapp.net']) {
      const missing = await api.call('GET', path);
      expect(missing.status, path).toBe(404);
      expect(missing.body).toMatchObject({ ok: false, error: 'Account not found' });
    }
  });
});
