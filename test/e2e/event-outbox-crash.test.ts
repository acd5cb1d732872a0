import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseKey } from '../../core/keys.js';
import { batchWrite } from '../../core/store/batch.js';
import { listOutboxItems } from '../../core/store/event-outbox.js';
import { findLease } from '../../core/store/leases.js';
import { findMessage } from '../../core/store/messages.js';
import { registerWebhook } from '../../core/store/webhooks.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { connectByCommand } from './support/commands.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { holdPosts } from './support/receiver-hold.js';

/**
 * kill -9 of the connector after a row change and before its webhook event was delivered or
 * queued: the event still reaches the webhook after the restart, under the same X-Webhook-Id.
 * Events go out straight from the connector (connector/webhooks/straight-delivery.ts), held
 * until their first attempt is answered: the webhook receiver holds the POSTs of the chosen
 * events unanswered, so the kill comes exactly then, for a `message.status` (its receipt is not
 * written ahead: the event outbox holds it) and a `message.reaction` (its write-ahead record
 * holds it). Every wait is generous: with the rest of the suites beside it, the send that starts
 * the story once took over 20 s, and a wait for the held reaction over 60 s.
 */
describe('status and reaction events across a connector crash', { timeout: 480_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  const children: ChildConnector[] = [];
  const LONG = { timeoutMs: 180_000, intervalMs: 100 };
  const alice = { id: 'oboxalice', phone: '15550310001', jid: '15550310001@s.whatsapp.net' };
  const bob = { id: 'oboxbob', phone: '15550310002', jid: '15550310002@s.whatsapp.net' };

  const postsOf = (id: string) => gw.webhooks.countFor(id);
  const spawnChild = async (env: Record<string, string>) => {
    const child = spawnConnector({ ...gw.env, WEBHOOK_TIMEOUT_MS: '1000', SEND_TIMEOUT_MS: gw.config.SEND_TIMEOUT_MS.toString(), ...env });
    children.push(child);
    for (const account of [alice, bob]) {
      await waitFor(
        `the child connector to own ${account.id}`,
        async () => (await findLease(gw.table, account.id))?.owner.includes(`:${child.pid}:`),
        LONG,
      );
      await gw.waitForStatus(account.id, 'connected', LONG.timeoutMs);
    }
    return child;
  };

  beforeAll(async () => {
    // The subject is the events after the kill, not the send's speed: a 60-s deadline.
    gw = await startGateway({ overrides: { SEND_TIMEOUT_MS: '60000' } });
    api = await startTestApi(gw.stack);
    await registerWebhook(gw.table, { url: gw.webhooks.url, events: ['*'] });
    await connectByCommand(gw, alice);
    await connectByCommand(gw, bob);
    await gw.stopConnector();
  });
  afterAll(async () => {
    for (const child of children) await child.kill();
    await api?.close();
    await gw?.stop();
  });

  it('kill -9 while the first POSTs are out: the status and the reaction are posted again after the restart, same ids', async () => {
    // Alice's `delivered` and Bob's reaction event are held at the receiver; everything else is
    // answered. The POSTs' time limit and the straight wait outlast the test: the kill comes first.
    const hold = holdPosts(
      gw.webhooks,
      (eventId) =>
        (eventId.startsWith(`${alice.id}:`) && eventId.endsWith(':status:delivered')) ||
        (eventId.startsWith(`${bob.id}:`) && eventId.endsWith(':reaction')),
    );
    const first = await spawnChild({ WEBHOOK_TIMEOUT_MS: '400000', WEBHOOK_STRAIGHT_WAIT_MS: '400000' });

    const sent = await api.call('POST', `/accounts/${alice.id}/message/send`, { to: bob.jid, message: 'react to me, bob' });
    expect(sent.body, JSON.stringify(sent.body)).toMatchObject({ ok: true });
    const messageId = String(sent.body.messageId);
    const statusId = `${alice.id}:${messageId}:status:delivered`;
    await waitFor('the delivered status event to be held', () => hold.held.has(statusId), LONG);

    const react = await api.call('POST', `/accounts/${alice.id}/message/react`, { to: bob.jid, messageId, emoji: '🔥' });
    expect(react.body, JSON.stringify(react.body)).toMatchObject({ ok: true });
    // Its id is the reaction message's, which the route does not answer.
    const reactionId = await waitFor(
      'the reaction event to be held',
      () => [...hold.held].find((id) => id.startsWith(`${bob.id}:`) && id.endsWith(':reaction')),
      LONG,
    );

    // The worst moment: both rows changed, neither event delivered nor queued.
    expect((await findMessage(gw.table, alice.id, messageId))?.status).toMatch(/^(delivered|read)$/);
    expect((await findMessage(gw.table, bob.id, messageId))?.reactions).toEqual([expect.objectContaining({ emoji: '🔥' })]);
    await first.kill();
    expect(postsOf(statusId)).toBe(1);
    expect(postsOf(reactionId)).toBe(1);
    const leftBehind = (await listOutboxItems(gw.table, alice.id)).map((item) => item.id);
    expect(leftBehind.length).toBeGreaterThan(0);

    // The dead process's leases: waiting out their expiry is the ownership suite's subject.
    await batchWrite(gw.table, [{ delete: leaseKey(alice.id) }, { delete: leaseKey(bob.id) }]);
    hold.answerAll();
    await spawnChild({});
    await waitFor('both events to be posted again', () => postsOf(statusId) >= 2 && postsOf(reactionId) >= 2, LONG);
    const status = gw.webhooks.posts.findLast((p) => p.headers['x-webhook-id'] === statusId);
    expect(status?.body).toEqual({
      event: 'message.status',
      accountId: alice.id,
      messageId,
      chatId: bob.jid,
      status: 'delivered',
      timestamp: expect.any(Number),
    });
    const reaction = gw.webhooks.posts.findLast((p) => p.headers['x-webhook-id'] === reactionId);
    expect(reaction?.body).toMatchObject({ event: 'message.reaction', accountId: bob.id, messageId, emoji: '🔥' });
    // Replayed, they go (the new process keeps a spent item of its own once it handles a receipt).
    await waitFor(
      'the items left behind to be deleted',
      async () => (await listOutboxItems(gw.table, alice.id)).every((item) => !leftBehind.includes(item.id)),
      LONG,
    );
  });
});
