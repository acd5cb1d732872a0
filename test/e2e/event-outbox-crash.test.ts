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
import { startSqsGate, type SqsGate } from './support/sqs-gate.js';

/**
 * kill -9 of the connector after a row change and before the enqueue of its webhook event: the
 * event still reaches the webhook after the restart, under the same X-Webhook-Id. The
 * connector's SQS goes through a gate that holds the enqueue of the chosen events unanswered, so
 * the kill comes exactly between the two: a `message.status` (its receipt is not written ahead:
 * the event outbox holds it) and a `message.reaction` (its write-ahead record holds it).
 */
describe('status and reaction events across a connector crash', { timeout: 240_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  let gate: SqsGate;
  const children: ChildConnector[] = [];
  const alice = { id: 'oboxalice', phone: '15550310001', jid: '15550310001@s.whatsapp.net' };
  const bob = { id: 'oboxbob', phone: '15550310002', jid: '15550310002@s.whatsapp.net' };

  const posted = () => new Set(gw.webhooks.posts.map((p) => String(p.headers['x-webhook-id'])));
  const spawnChild = async (env: Record<string, string>) => {
    const child = spawnConnector({ ...gw.env, WEBHOOK_TIMEOUT_MS: '1000', SEND_TIMEOUT_MS: gw.config.SEND_TIMEOUT_MS.toString(), ...env });
    children.push(child);
    for (const account of [alice, bob]) {
      await waitFor(
        `the child connector to own ${account.id}`,
        async () => (await findLease(gw.table, account.id))?.owner.includes(`:${child.pid}:`),
        { intervalMs: 100 },
      );
      await gw.waitForStatus(account.id, 'connected');
    }
    return child;
  };

  beforeAll(async () => {
    // Every SQS request of the first child goes through the gate in this process: with a benchmark
    // beside the suite, the send that starts the story once took longer than the default 20-s
    // deadline. The subject is the events after the kill, not the send's speed.
    gw = await startGateway({ overrides: { SEND_TIMEOUT_MS: '60000' } });
    api = await startTestApi(gw.stack);
    await registerWebhook(gw.table, { url: gw.webhooks.url, events: ['*'] });
    await connectByCommand(gw, alice);
    await connectByCommand(gw, bob);
    await gw.stopConnector();
    gate = await startSqsGate(gw.env.AWS_ENDPOINT_URL_SQS ?? '', gw.config.WEBHOOK_QUEUE_NAME);
  });
  afterAll(async () => {
    for (const child of children) await child.kill();
    await gate?.close();
    await api?.close();
    await gw?.stop();
  });

  it('kill -9 between the row change and the enqueue: the status and the reaction are posted after the restart, same ids', async () => {
    const first = await spawnChild({ AWS_ENDPOINT_URL_SQS: gate.url });
    // Alice's `delivered` and Bob's reaction event are held; everything else passes.
    gate.hold = (eventId) =>
      (eventId.startsWith(`${alice.id}:`) && eventId.endsWith(':status:delivered')) ||
      (eventId.startsWith(`${bob.id}:`) && eventId.endsWith(':reaction'));

    const sent = await api.call('POST', `/accounts/${alice.id}/message/send`, { to: bob.jid, message: 'react to me, bob' });
    expect(sent.body, JSON.stringify(sent.body)).toMatchObject({ ok: true });
    const messageId = String(sent.body.messageId);
    const statusId = `${alice.id}:${messageId}:status:delivered`;
    await waitFor('the delivered status event to be held', () => gate.held.has(statusId));

    const react = await api.call('POST', `/accounts/${alice.id}/message/react`, { to: bob.jid, messageId, emoji: '🔥' });
    expect(react.body, JSON.stringify(react.body)).toMatchObject({ ok: true });
    // Its id is the reaction message's, which the route does not answer.
    const reactionId = await waitFor('the reaction event to be held', () =>
      [...gate.held].find((id) => id.startsWith(`${bob.id}:`) && id.endsWith(':reaction')),
    );

    // The worst moment: both rows changed, neither event in the queue.
    expect((await findMessage(gw.table, alice.id, messageId))?.status).toMatch(/^(delivered|read)$/);
    expect((await findMessage(gw.table, bob.id, messageId))?.reactions).toEqual([expect.objectContaining({ emoji: '🔥' })]);
    await first.kill();
    expect(posted().has(statusId)).toBe(false);
    expect(posted().has(reactionId)).toBe(false);
    const leftBehind = (await listOutboxItems(gw.table, alice.id)).map((item) => item.id);
    expect(leftBehind.length).toBeGreaterThan(0);

    // The dead process's leases: waiting out their expiry is the ownership suite's subject.
    await batchWrite(gw.table, [{ delete: leaseKey(alice.id) }, { delete: leaseKey(bob.id) }]);
    await spawnChild({});
    await waitFor('both events to be posted', () => posted().has(statusId) && posted().has(reactionId), { timeoutMs: 90_000 });
    const status = gw.webhooks.posts.find((p) => p.headers['x-webhook-id'] === statusId);
    expect(status?.body).toEqual({
      event: 'message.status',
      accountId: alice.id,
      messageId,
      chatId: bob.jid,
      status: 'delivered',
      timestamp: expect.any(Number),
    });
    const reaction = gw.webhooks.posts.find((p) => p.headers['x-webhook-id'] === reactionId);
    expect(reaction?.body).toMatchObject({ event: 'message.reaction', accountId: bob.id, messageId, emoji: '🔥' });
    // Replayed, they go (the new process keeps a spent item of its own once it handles a receipt).
    await waitFor('the items left behind to be deleted', async () =>
      (await listOutboxItems(gw.table, alice.id)).every((item) => !leftBehind.includes(item.id)),
    );
  });
});
