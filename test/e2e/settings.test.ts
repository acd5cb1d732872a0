import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookBody, type WebhookEvent } from '../../core/schemas/webhook-event.js';
import { findMessage } from '../../core/store/messages.js';
import type { TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import type { Gateway } from './support/gateway.js';
import { startEventGateway, type CollectedEvents } from './support/webhook-events.js';

/**
 * Account settings at work on the sandbox with real Baileys (docs/sending.md): `ignoreGroups`
 * keeps a group's messages out of the store and the events while direct ones go on, calls are
 * reported (`offer`, `missed`) or declined with a message to the caller (`rejected`, the
 * sandbox seeing the gateway's device refuse the call), and a PATCH reaches the running session
 * without a restart. Events are read off the webhook queue (no delivery worker runs).
 */
describe('story: settings on connected accounts', { timeout: 240_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  let collected: CollectedEvents;
  let stop: (() => Promise<void>) | undefined;
  const alice = { id: 'setalice', phone: '15550900001' };
  const bob = { id: 'setbob', phone: '15550900002' };
  const dave = '15550900004';
  const jid = (phone: string) => `${phone}@s.whatsapp.net`;
  let groupId: string;

  async function link(who: { id: string; phone: string }, settings?: unknown) {
    await gw.control.createPhone(who.phone);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: who.id, ...(settings ? { settings } : {}) })).status).toBe(201);
    await gw.linkAccount(who.id, who.phone, { logsFrom: from });
  }

  async function send(accountId: string, to: string, message: string): Promise<string> {
    const sent = await api.call('POST', `/accounts/${accountId}/message/send`, { to, message });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    return String(sent.body.messageId);
  }

  /** PATCHes the settings and waits until the account's running session says it applied them. */
  async function changeSettings(accountId: string, patch: unknown) {
    const from = gw.logs.lines.length;
    expect((await api.call('PATCH', `/accounts/${accountId}/settings`, patch)).status).toBe(200);
    await gw.logs.waitForLine(`${accountId}: settings applied`, (l) => l.accountId === accountId && l.msg === 'account settings applied', {
      from,
    });
  }

  const callEvent = (accountId: string, callId: string, status: string, from: number) =>
    collected.next(
      `${accountId}: call ${status}`,
      from,
      (e) => e.accountId === accountId && e.event === 'call' && e.body.callId === callId && e.body.status === status,
    );
  const eventsOf = (accountId: string, match: (e: WebhookEvent) => boolean) =>
    collected.events.filter((e) => e.accountId === accountId && match(e));

  beforeAll(async () => {
    ({ gw, api, collected, stop } = await startEventGateway());
    await link(alice);
    await link(bob, { ignoreGroups: true });
    await gw.control.createPhone(dave, 'Dave');
  });
  afterAll(async () => {
    await stop?.();
  });

  it('ignoreGroups: a group message is neither stored nor posted, a direct one is', async () => {
    const created = await api.call('POST', `/accounts/${alice.id}/groups`, { subject: 'Quiet', participants: [jid(bob.phone)] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    groupId = String((created.body.group as { groupId: string }).groupId);

    const inGroup = await send(alice.id, groupId, 'to the group');
    // Bob's device took it in (its receipt makes alice's copy delivered): what follows comes after it.
    await waitFor('the group message delivered to bob', async () => {
      const stored = await api.call('GET', `/accounts/${alice.id}/messages/${inGroup}`);
      return (stored.body.message as { status?: string } | undefined)?.status === 'delivered';
    });
    const direct = await send(alice.id, jid(bob.phone), 'just to bob');
    await waitFor('the direct message stored for bob', () => findMessage(gw.table, bob.id, direct));
    await collected.next(
      'the message event of the direct one',
      0,
      (e) => e.accountId === bob.id && e.event === 'message' && e.body.messageId === direct,
    );

    // One inbound queue per account, in order: the group message was handled before the direct one.
    expect(await findMessage(gw.table, bob.id, inGroup)).toBeUndefined();
    expect(eventsOf(bob.id, (e) => e.event === 'message' && e.body.messageId === inGroup)).toEqual([]);
    const chats = await api.call('GET', `/accounts/${bob.id}/chats`);
    expect((chats.body.chats as { chatId: string }[]).map((c) => c.chatId)).toEqual([jid(alice.phone)]);
  });

  it('a settings change reaches the connected session without a restart: the next group message is stored and posted', async () => {
    const before = gw.connector;
    await changeSettings(bob.id, { ignoreGroups: false });
    const inGroup = await send(alice.id, groupId, 'heard now');
    const stored = await waitFor('the group message stored for bob', () => findMessage(gw.table, bob.id, inGroup));
    expect(stored).toMatchObject({ chatId: groupId, fromMe: false });
    await collected.next('its message event', 0, (e) => e.accountId === bob.id && e.event === 'message' && e.body.messageId === inGroup);
    expect(gw.connector).toBe(before);
  });

  it('a call not declined: offer, then missed when the caller hangs up unanswered', async () => {
    const from = collected.events.length;
    const { callId } = await gw.control.call(dave, alice.phone, true);
    const offer = await callEvent(alice.id, callId, 'offer', from);
    expect(webhookBody(offer)).toEqual({
      event: 'call',
      accountId: alice.id,
      callId,
      from: jid(dave),
      isVideo: true,
      status: 'offer',
      timestamp: offer.body.timestamp,
    });
    expect((await gw.control.endCall(dave, callId)).call).toMatchObject({ status: 'missed' });
    const missed = await callEvent(alice.id, callId, 'missed', from);
    expect(webhookBody(missed)).toMatchObject({ callId, from: jid(dave), isVideo: true, status: 'missed' });
    expect((await gw.control.calls(dave)).find((c) => c.callId === callId)).toMatchObject({ status: 'missed' });
    expect((await gw.control.calls(dave)).find((c) => c.callId === callId)?.rejectedBy).toBeUndefined();
  });

  it('rejectCalls turned on while connected: the next call is declined by the gateway, the caller gets the message, the event says rejected', async () => {
    const before = gw.connector;
    await changeSettings(alice.id, { rejectCalls: true, callRejectMessage: 'This number does not take calls; write instead.' });
    const [device] = (await gw.control.devices(alice.phone)).filter((d) => d.device !== 0);
    const from = collected.events.length;
    const { callId } = await gw.control.call(dave, alice.phone);

    const declined = await waitFor('the sandbox to see the call rejected', async () =>
      (await gw.control.calls(dave)).find((c) => c.callId === callId && c.status === 'rejected'),
    );
    expect(declined).toMatchObject({ from: dave, to: alice.phone, video: false, rejectedBy: device!.jid });
    const rejected = await callEvent(alice.id, callId, 'rejected', from);
    expect(webhookBody(rejected)).toEqual({
      event: 'call',
      accountId: alice.id,
      callId,
      from: jid(dave),
      isVideo: false,
      status: 'rejected',
      timestamp: rejected.body.timestamp,
    });
    await waitFor("the message in the caller's inbox", async () =>
      (await gw.control.inbox(dave)).find(
        (m) => m.from?.startsWith(alice.phone) && m.text === 'This number does not take calls; write instead.',
      ),
    );
    // Declined, so never offered (and never missed).
    expect(eventsOf(alice.id, (e) => e.event === 'call' && e.body.callId === callId).map((e) => e.body.status)).toEqual(['rejected']);
    // A call ended by the gateway cannot be hung up as unanswered any more.
    await expect(gw.control.endCall(dave, callId)).rejects.toThrow(/409/);
    expect(gw.connector).toBe(before);
  });
});
