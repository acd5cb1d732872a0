import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEventId } from '../../core/schemas/webhook-event.js';
import { findMessage } from '../../core/store/messages.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { startTestApi } from '../support/test-api.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * Webhooks end to end: a message received by an account over the sandbox network is stored,
 * then POSTed to the registered URL with the payload of docs/webhooks.md; a receiver that is down for a
 * while gets every event exactly once when it comes back.
 */
describe('webhooks', () => {
  let gw: Gateway;
  let api: Awaited<ReturnType<typeof startTestApi>>;
  const receiver = new WebhookReceiver();
  const alice = { id: 'hookalice', phone: '15550400001' };
  const bob = { id: 'hookbob', phone: '15550400002' };
  const carol = { phone: '15550400003' };
  const jid = (phone: string) => `${phone}@s.whatsapp.net`;

  async function link(account: { id: string; phone: string }) {
    await gw.control.createPhone(account.phone);
    const from = gw.logs.lines.length;
    expect((await api.call('POST', '/accounts', { id: account.id })).status).toBe(201);
    await gw.linkAccount(account.id, account.phone, { logsFrom: from });
  }

  async function sendText(from: string, to: string, message: string): Promise<string> {
    const sent = await api.call('POST', `/accounts/${from}/message/send`, { to, message });
    expect(sent.body, JSON.stringify(sent.body)).toMatchObject({ ok: true });
    return sent.body.messageId as string;
  }

  async function webhookQueueDepth(): Promise<number> {
    const url = await gw.queues.webhookQueueUrl();
    const result = await gw.stack.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(result.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(result.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  }

  beforeAll(async () => {
    // Short retry delays: SQS visibility counts whole seconds, so retries come after 1, 2, 4 s;
    // short probe delays: a receiver back up is probed within a second.
    gw = await startGateway({
      overrides: { WEBHOOK_RETRY_BASE_MS: '500', WEBHOOK_MAX_ATTEMPTS: '5', WEBHOOK_PROBE_BASE_MS: '200', WEBHOOK_PROBE_MAX_MS: '1000' },
    });
    api = await startTestApi(gw.stack);
    await receiver.up();
    const registered = await api.call('POST', '/webhooks', { url: receiver.url });
    expect(registered.status).toBe(201);
    await link(alice);
    await link(bob);
    await gw.control.createPhone(carol.phone, 'Carol');
  });
  afterAll(async () => {
    await api?.close();
    await gw?.stop();
    await receiver.close();
  });

  it('a message received by an account is stored, then POSTed with the spec payload', async () => {
    const messageId = await sendText(alice.id, jid(bob.phone), 'hi bob 👋');
    const eventId = webhookEventId(bob.id, messageId);
    await receiver.waitFor(() => receiver.countFor(eventId) === 1, 60_000);

    const stored = await findMessage(gw.table, bob.id, messageId);
    const post = receiver.posts.find((p) => p.headers['x-webhook-id'] === eventId);
    expect(post?.body).toEqual({
      event: 'message',
      from: jid(alice.phone),
      message: 'hi bob 👋',
      messageId,
      timestamp: stored?.timestamp,
      accountId: bob.id,
      chatId: jid(alice.phone),
      fromMe: false,
      type: 'text',
      // The sandbox addresses by phone number and gives the sender's LID beside it.
      fromPn: jid(alice.phone),
      fromLid: expect.stringMatching(/@lid$/),
    });
    expect(post?.headers['content-type']).toBe('application/json');
    // The sender's own copy (fromMe) is stored but not delivered.
    expect(await findMessage(gw.table, alice.id, messageId)).toMatchObject({ fromMe: true });
    expect(receiver.countFor(webhookEventId(alice.id, messageId))).toBe(0);
  });

  it('a received image is POSTed with type image and its caption as message', async () => {
    const png = await sharp({ create: { width: 48, height: 48, channels: 3, background: '#3355ff' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set('to', jid(bob.phone));
    form.set('caption', 'blue square');
    form.set('image', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'blue.png');
    const response = await fetch(`${api.url}/accounts/${alice.id}/message/send/image`, { method: 'POST', body: form });
    const { messageId } = (await response.json()) as { messageId: string };
    const eventId = webhookEventId(bob.id, messageId);
    await receiver.waitFor(() => receiver.countFor(eventId) === 1, 60_000);
    expect(receiver.posts.find((p) => p.headers['x-webhook-id'] === eventId)?.body).toMatchObject({
      type: 'image',
      message: 'blue square',
      messageId,
      accountId: bob.id,
      fromMe: false,
    });
    // Stored (with its media) before it was posted.
    expect((await findMessage(gw.table, bob.id, messageId))?.mediaId).toBeDefined();
  });

  it('a message from a phone reaches the webhook too', async () => {
    const { id } = await gw.control.sendFromPhone(carol.phone, jid(bob.phone), 'hello from carol');
    const eventId = webhookEventId(bob.id, id);
    await receiver.waitFor(() => receiver.countFor(eventId) === 1, 60_000);
    expect(receiver.posts.find((p) => p.headers['x-webhook-id'] === eventId)?.body).toMatchObject({
      from: jid(carol.phone),
      chatId: jid(carol.phone),
      message: 'hello from carol',
      accountId: bob.id,
      fromMe: false,
    });
  });

  it('receiver down for a while, then up: every event is delivered exactly once per X-Webhook-Id', async () => {
    await receiver.down();
    const refusedBefore = receiver.refused;
    const texts = ['one', 'two', 'three'];
    const eventIds: string[] = [];
    for (const text of texts) eventIds.push(webhookEventId(bob.id, await sendText(alice.id, jid(bob.phone), text)));
    // Down for a while: every event fails its first attempt and its first retry.
    await receiver.waitFor(() => receiver.refused - refusedBefore >= 2 * texts.length, 60_000);
    await receiver.up();

    await receiver.waitFor(() => eventIds.every((id) => receiver.countFor(id) >= 1), 60_000);
    await waitFor('the webhook queue to drain', async () => (await webhookQueueDepth()) === 0);
    for (const id of eventIds) expect(receiver.countFor(id)).toBe(1);
    expect(
      receiver.posts
        .filter((p) => eventIds.includes(String(p.headers['x-webhook-id'])))
        .map((p) => (p.body as { message: string }).message)
        .sort(),
    ).toEqual([...texts].sort());
  });
});
