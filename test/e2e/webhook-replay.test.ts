import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookDelivery, type WebhookDelivery } from '../../connector/webhooks/delivery-worker.js';
import { createQueues, type Queues } from '../../core/queues.js';
import type { Message } from '../../core/schemas/message.js';
import { webhookEventId } from '../../core/schemas/webhook-event.js';
import { updateChat } from '../../core/store/chats.js';
import { putMessage } from '../../core/store/messages.js';
import { tableOf } from '../../core/store/table.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { queueDepth } from '../support/queue-depth.js';
import { startApiStack, type TestApi } from '../support/test-api.js';
import { silentLogger, type TestStack } from '../support/test-stack.js';
import { waitFor } from '../support/wait.js';

/**
 * Replay end to end: registrations made through the API, the replay route, the delivery worker,
 * and a receiver that verifies the signature. The replayed message reaches only the webhook it was
 * replayed to, with the X-Webhook-Id it had the first time.
 */
describe('webhook replay through the delivery worker', () => {
  let stack: TestStack;
  let api: TestApi;
  let stop: (() => Promise<void>) | undefined;
  let worker: WebhookDelivery | undefined;
  let queues: Queues;
  const replayed = new WebhookReceiver();
  const other = new WebhookReceiver();
  const secret = 'replay-secret-0123456789';

  beforeAll(async () => {
    ({ stack, api, stop } = await startApiStack());
    await replayed.up();
    await other.up();
    queues = createQueues(stack.config, stack.clients, silentLogger);
    worker = startWebhookDelivery({ config: stack.config, clients: stack.clients, logger: silentLogger, queues, registrationCacheMs: 0 });
  });
  afterAll(async () => {
    await worker?.stop();
    await stop?.();
    await replayed.close();
    await other.close();
  });

  it('re-sends a stored message to that webhook only, signed, with its original X-Webhook-Id', async () => {
    const accountId = `rpe${Date.now().toString(36)}`;
    expect((await api.call('POST', '/accounts', { id: accountId })).status).toBe(201);
    const target = await api.call('POST', `/accounts/${accountId}/webhooks`, { url: replayed.url, secret });
    expect(target.status).toBe(201);
    const webhookId = String((target.body.webhook as { webhookId: string }).webhookId);
    expect((await api.call('POST', `/accounts/${accountId}/webhooks`, { url: other.url })).status).toBe(201);

    const chatId = '15557770001@s.whatsapp.net';
    const message: Message = {
      messageId: '3EB0REPLAYE2E',
      from: chatId,
      chatId,
      timestamp: 1_767_000_000_000,
      type: 'text',
      fromMe: false,
      text: 'again',
    };
    await putMessage(tableOf(stack.config, stack.clients), accountId, message);
    await updateChat(tableOf(stack.config, stack.clients), accountId, chatId, { at: message.timestamp, unread: 1 });

    const answer = await api.call('POST', `/webhooks/${webhookId}/replay`, { since: message.timestamp - 1, until: message.timestamp + 1 });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ ok: true, queued: 1 });

    await waitFor('the replayed POST', () => replayed.posts.length === 1);
    const [post] = replayed.posts;
    expect(post?.headers['x-webhook-id']).toBe(webhookEventId(accountId, message.messageId));
    expect(post?.headers['x-webhook-event']).toBe('message');
    expect(post?.body).toMatchObject({ event: 'message', accountId, messageId: message.messageId, message: 'again', from: chatId });
    const signature = String(post?.headers['x-webhook-signature']);
    const { t, v1 } = Object.fromEntries(signature.split(',').map((part) => part.split('='))) as { t: string; v1: string };
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${post?.raw}`).digest('hex'));
    // The other webhook of the account selects the same event but was not replayed to. The
    // worker acks an event once it has POSTed it to every webhook it is for: once the queue is
    // empty, a POST to the other one would have been received.
    await waitFor(
      'the replayed event to be acked',
      async () => (await queueDepth(stack.clients.sqs, await queues.webhookQueueUrl())) === 0,
    );
    expect(other.posts).toHaveLength(0);
  });
});
