import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseKey } from '../../core/keys.js';
import { batchWrite } from '../../core/store/batch.js';
import { listInboxRecords } from '../../core/store/inbox.js';
import { findLease } from '../../core/store/leases.js';
import { findMessage } from '../../core/store/messages.js';
import { registerWebhook } from '../../core/store/webhooks.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { connectByCommand } from './support/commands.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { holdPosts } from './support/receiver-hold.js';
import { startSqsGate, type SqsGate } from './support/sqs-gate.js';

/**
 * Straight delivery end to end (docs/webhooks.md, Delivery): a connector process whose SQS
 * requests pass through a gate that lists every send to the webhook queue. A message from a
 * phone is POSTed by the connector that stored it with no send to the queue; the status events
 * of a sent message, which no registration selects, are not queued either; a failed first
 * attempt is queued once and retried under the same id; and a kill -9 while the first POST is
 * out leaves the event held, so that the next connector posts it. Every wait is generous and on
 * a condition: the suite shares the machine with the others.
 */
describe('straight delivery from the connector', { timeout: 480_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  let gate: SqsGate;
  const children: ChildConnector[] = [];
  const alice = { id: 'straightalice', phone: '15550320001', jid: '15550320001@s.whatsapp.net' };
  const bob = { phone: '15550320002', jid: '15550320002@s.whatsapp.net' };
  const LONG = { timeoutMs: 180_000, intervalMs: 100 };

  const postsOf = (id: string) => gw.webhooks.countFor(id);
  const spawnChild = async (env: Record<string, string>) => {
    const child = spawnConnector({ ...gw.env, AWS_ENDPOINT_URL_SQS: gate.url, WEBHOOK_RETRY_BASE_MS: '1000', ...env });
    children.push(child);
    await waitFor(
      'the child connector to own alice',
      async () => (await findLease(gw.table, alice.id))?.owner.includes(`:${child.pid}:`),
      LONG,
    );
    await gw.waitForStatus(alice.id, 'connected', LONG.timeoutMs);
    return child;
  };
  const sendFromBob = async (text: string) => {
    const { id } = await gw.control.sendFromPhone(bob.phone, alice.phone, text);
    return { messageId: id, eventId: `${alice.id}:${id}` };
  };

  beforeAll(async () => {
    gw = await startGateway({ overrides: { SEND_TIMEOUT_MS: '60000' } });
    api = await startTestApi(gw.stack);
    // `message` only: status and session events select no registration.
    await registerWebhook(gw.table, { url: gw.webhooks.url, events: ['message'] });
    await connectByCommand(gw, alice);
    await gw.control.createPhone(bob.phone, 'Bob');
    await gw.stopConnector();
    gate = await startSqsGate(gw.env.AWS_ENDPOINT_URL_SQS ?? '', gw.config.WEBHOOK_QUEUE_NAME);
  });
  afterAll(async () => {
    for (const child of children) await child.kill();
    await gate?.close();
    await api?.close();
    await gw?.stop();
  });

  it('a message from a phone is POSTed with no send to the webhook queue; status events nobody selects are not queued', async () => {
    const child = await spawnChild({});
    const inbound = await sendFromBob('straight to the webhook');
    await waitFor('the message to be posted', () => postsOf(inbound.eventId) === 1, LONG);
    expect(gw.webhooks.posts.find((p) => p.headers['x-webhook-id'] === inbound.eventId)?.body).toMatchObject({
      event: 'message',
      accountId: alice.id,
      messageId: inbound.messageId,
      message: 'straight to the webhook',
    });

    // Alice's send moves through sent and delivered (the phone receipts at once): events no
    // registration selects.
    const sent = await api.call('POST', `/accounts/${alice.id}/message/send`, { to: bob.jid, message: 'a send, for its statuses' });
    expect(sent.body, JSON.stringify(sent.body)).toMatchObject({ ok: true });
    const messageId = String(sent.body.messageId);
    await waitFor(
      'the send to be delivered',
      async () => /^(delivered|read)$/.test((await findMessage(gw.table, alice.id, messageId))?.status ?? ''),
      LONG,
    );
    // One more message behind the receipts: handled after them, in the account's order.
    const after = await sendFromBob('after the receipts');
    await waitFor('the later message to be posted', () => postsOf(after.eventId) === 1, LONG);

    expect(gate.passed).toEqual([]);
    await child.terminate();
  });

  it('a failed first attempt is queued once and retried under the same id', async () => {
    let first = true;
    gw.webhooks.setAnswer((post) => {
      if (!String(post.headers['x-webhook-id']).startsWith(`${alice.id}:`) || !first) return 200;
      first = false;
      return 500;
    });
    const child = await spawnChild({});
    const passedBefore = gate.passed.length;
    const inbound = await sendFromBob('fails once');
    await waitFor('the retry to be posted', () => postsOf(inbound.eventId) === 2, LONG);
    const attempts = gw.webhooks.posts
      .filter((p) => p.headers['x-webhook-id'] === inbound.eventId)
      .map((p) => p.headers['x-webhook-attempt']);
    expect(attempts).toEqual(['1', '2']);
    expect(gate.passed.slice(passedBefore)).toEqual([inbound.eventId]);
    gw.webhooks.setAnswer(() => 200);
    await child.terminate();
  });

  it('kill -9 while the first POST is out: the record still holds the event, and the next connector posts it, same id', async () => {
    const held = holdPosts(gw.webhooks, (eventId) => eventId.startsWith(`${alice.id}:`));
    // The POST's time limit and the straight wait outlast the test: the kill comes first.
    const first = await spawnChild({ WEBHOOK_TIMEOUT_MS: '400000', WEBHOOK_STRAIGHT_WAIT_MS: '400000' });
    const passedBefore = gate.passed.length;
    const inbound = await sendFromBob('posted when killed');
    await waitFor('the first POST to be held', () => held.held.has(inbound.eventId), LONG);
    // The worst moment: stored, the POST out, nothing queued; the write-ahead record holds the event.
    expect(await findMessage(gw.table, alice.id, inbound.messageId)).toBeDefined();
    expect((await listInboxRecords(gw.table, alice.id)).map((r) => r.messageId)).toContain(inbound.messageId);
    await first.kill();
    expect(gate.passed.slice(passedBefore)).toEqual([]);

    held.answerAll();
    // The dead process's lease: waiting out its expiry is the ownership suite's subject.
    await batchWrite(gw.table, [{ delete: leaseKey(alice.id) }]);
    await spawnChild({});
    await waitFor('the event to be posted again', () => postsOf(inbound.eventId) >= 2, LONG);
    expect(gw.webhooks.posts.findLast((p) => p.headers['x-webhook-id'] === inbound.eventId)?.body).toMatchObject({
      event: 'message',
      messageId: inbound.messageId,
    });
    await waitFor(
      'the record to be deleted',
      async () => !(await listInboxRecords(gw.table, alice.id)).some((r) => r.messageId === inbound.messageId),
      LONG,
    );
  });
});
