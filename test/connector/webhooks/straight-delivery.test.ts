import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { startWebhookDelivery, type WebhookDelivery } from '../../../connector/webhooks/delivery-worker.js';
import { createClients, destroyClients, type AwsClients } from '../../../core/aws.js';
import type { Config } from '../../../core/config.js';
import { messageEventFor } from '../../../core/message-event.js';
import { createQueues, resolveQueueUrl } from '../../../core/queues.js';
import { webhookBody, type WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { tableOf } from '../../../core/store/table.js';
import { listDeliveries } from '../../../core/store/webhook-deliveries.js';
import { deleteWebhook, registerWebhook } from '../../../core/store/webhooks.js';
import { countRequests } from '../../support/counted-table.js';
import { silentLogger, useTestStack, type TestStack } from '../../support/test-stack.js';
import { simulatedDelay, waitFor } from '../../support/wait.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { workerQueues } from './worker-queues.js';

/**
 * Straight delivery (connector/webhooks/straight-delivery.ts, docs/webhooks.md): `publish` makes
 * an event's first attempt at once, and the webhook queue sees only retries. Each case has its
 * queues, its account-scoped webhook (no other case's event selects it) and a worker on clients
 * of its own, whose SQS and DynamoDB requests are counted.
 */
const t = useTestStack();
let seq = 0;

interface Case {
  config: Config;
  accountId: string;
  delivery: WebhookDelivery;
  counts: Map<string, number>;
  /** SendMessage and SendMessageBatch requests of the worker so far. */
  sends(): number;
  event(n: number): WebhookEvent;
  cleanUp(): Promise<void>;
}

async function newCase(
  receiver: WebhookReceiver | undefined,
  overrides: Record<string, string> = {},
  straightInFlight?: number,
): Promise<Case> {
  seq += 1;
  const accountId = `straight${seq}`;
  const { config } = await workerQueues(t.stack, overrides);
  const table = tableOf(config, t.stack.clients);
  if (receiver) await registerWebhook(table, { url: receiver.url, accountId });
  const clients: AwsClients = createClients(config);
  const counts = countRequests(clients);
  const queues = createQueues(config, clients, silentLogger);
  const delivery = startWebhookDelivery({
    config,
    clients,
    logger: silentLogger,
    queues,
    ...(straightInFlight === undefined ? {} : { straightInFlight }),
  });
  return {
    config,
    accountId,
    delivery,
    counts,
    sends: () => (counts.get('SendMessageCommand') ?? 0) + (counts.get('SendMessageBatchCommand') ?? 0),
    event(n) {
      const peer = '15550003333@s.whatsapp.net';
      return messageEventFor(accountId, {
        messageId: `3EB0STRAIGHT${seq}N${n}`,
        from: peer,
        chatId: peer,
        timestamp: 1_767_000_000_000 + n,
        type: 'text',
        fromMe: false,
        text: `straight ${n}`,
      });
    },
    async cleanUp() {
      await delivery.stop();
      destroyClients(clients);
      if (receiver) await deleteWebhook(table, receiver.url, accountId);
    },
  };
}

describe('straight delivery', () => {
  it('an event is POSTed at once, with no SQS send: publish resolves once the receiver answered', async () => {
    const receiver = new WebhookReceiver();
    await receiver.up();
    const c = await newCase(receiver);
    try {
      const event = c.event(1);
      await c.delivery.publish(event);
      // Resolved after the answer: the POST is there already, nothing was queued.
      expect(receiver.posts).toHaveLength(1);
      const [post] = receiver.posts;
      expect(post?.body).toEqual(webhookBody(event));
      expect(post?.headers['x-webhook-id']).toBe(event.eventId);
      expect(post?.headers['webhook-id']).toBe(event.eventId);
      expect(post?.headers['x-webhook-attempt']).toBe('1');
      expect(c.sends()).toBe(0);
      expect(await queueDepth(t.stack, c.config.WEBHOOK_QUEUE_NAME)).toBe(0);
      const webhookId = String((await registeredFor(c, receiver)).webhookId);
      await waitFor('the delivery in the log', async () => {
        const [entry] = await listDeliveries(tableOf(c.config, t.stack.clients), webhookId, { limit: 10 });
        return entry?.status === 'delivered' && entry.attempts === 1 && entry.eventId === event.eventId;
      });
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('a failed first attempt is retried through SQS with the same id, as attempt 2', async () => {
    const receiver = new WebhookReceiver((_post, countForId) => (countForId === 1 ? 500 : 200));
    await receiver.up();
    const c = await newCase(receiver);
    try {
      const event = c.event(1);
      await c.delivery.publish(event);
      // Resolved once the retry was in the queue.
      expect(receiver.posts).toHaveLength(1);
      expect(c.sends()).toBe(1);
      await receiver.waitFor((posts) => posts.length === 2, 60_000);
      expect(receiver.posts.map((p) => p.headers['x-webhook-id'])).toEqual([event.eventId, event.eventId]);
      expect(receiver.posts.map((p) => p.headers['x-webhook-attempt'])).toEqual(['1', '2']);
      const webhookId = String((await registeredFor(c, receiver)).webhookId);
      await waitFor('the retry delivered in the log', async () => {
        const [entry] = await listDeliveries(tableOf(c.config, t.stack.clients), webhookId, { limit: 10 });
        return entry?.status === 'delivered' && entry.attempts === 2;
      });
      await waitFor('the queue drained', async () => (await queueDepth(t.stack, c.config.WEBHOOK_QUEUE_NAME)) === 0, { timeoutMs: 30_000 });
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('a receiver still failing after the straight attempt: the retries count it, and the last one goes to the DLQ', async () => {
    const receiver = new WebhookReceiver(() => 503);
    await receiver.up();
    const c = await newCase(receiver, { WEBHOOK_MAX_ATTEMPTS: '2' });
    try {
      const event = c.event(1);
      await c.delivery.publish(event);
      await receiver.waitFor((posts) => posts.length === 2, 60_000);
      const webhookId = String((await registeredFor(c, receiver)).webhookId);
      // Two attempts in all: the straight one and one from the queue, then given up.
      await waitFor('the pair given up in the log', async () => {
        const [entry] = await listDeliveries(tableOf(c.config, t.stack.clients), webhookId, { limit: 10 });
        return entry?.status === 'failed' && entry.attempts === 2;
      });
      await waitFor('the queue drained', async () => (await queueDepth(t.stack, c.config.WEBHOOK_QUEUE_NAME)) === 0, { timeoutMs: 30_000 });
      expect(await queueDepth(t.stack, c.config.WEBHOOK_DLQ_NAME)).toBe(1);
      expect(receiver.posts).toHaveLength(2);
      // In the DLQ for that webhook, without `attempted`: a redrive is a first attempt again.
      const dlq = createQueues({ ...c.config, WEBHOOK_QUEUE_NAME: c.config.WEBHOOK_DLQ_NAME }, t.stack.clients, silentLogger);
      const [dead] = await waitFor('the dead letter', async () => {
        const received = await dlq.receiveWebhookEvents({ waitSeconds: 1 });
        return received.length > 0 ? received : undefined;
      });
      expect(dead?.body).toMatchObject({ eventId: event.eventId, webhookId });
      expect(dead?.body.attempted).toBeUndefined();
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('events no registration selects are not queued, and cost no registrations read each', async () => {
    const c = await newCase(undefined);
    try {
      // Warm: the worker's first read of the registrations.
      await c.delivery.publish(c.event(0));
      const queriesBefore = c.counts.get('QueryCommand') ?? 0;
      await Promise.all(Array.from({ length: 20 }, (_, n) => c.delivery.publish(c.event(n + 1))));
      expect(c.sends()).toBe(0);
      expect(await queueDepth(t.stack, c.config.WEBHOOK_QUEUE_NAME)).toBe(0);
      // At most one fresh read for the twenty, shared (registrations.ts, asOf).
      expect((c.counts.get('QueryCommand') ?? 0) - queriesBefore).toBeLessThanOrEqual(1);
    } finally {
      await c.cleanUp();
    }
  });

  it('with as many first attempts out as allowed, the next event is queued untried at once: its publisher does not wait', async () => {
    const receiver = new WebhookReceiver(async (post) => {
      if (post.headers['x-webhook-attempt'] === '1' && receiver.posts.length === 1) await simulatedDelay(3_000);
      return 200;
    });
    await receiver.up();
    const c = await newCase(receiver, { WEBHOOK_STRAIGHT_WAIT_MS: '10000' }, 1);
    try {
      const slow = c.delivery.publish(c.event(1));
      await receiver.waitFor((posts) => posts.length === 1);
      const started = Date.now();
      await c.delivery.publish(c.event(2));
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(c.sends()).toBe(1);
      // The worker makes its first attempt, while the slow one is still out.
      await receiver.waitFor((posts) => posts.some((p) => p.headers['x-webhook-id'] === c.event(2).eventId), 30_000);
      await slow;
      expect(receiver.posts.map((p) => p.headers['x-webhook-id'])).toEqual([c.event(1).eventId, c.event(2).eventId]);
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('a slow receiver holds publish for WEBHOOK_STRAIGHT_WAIT_MS at most: a copy is queued, which finds the event delivered', async () => {
    const receiver = new WebhookReceiver(async () => {
      await simulatedDelay(1_500);
      return 200;
    });
    await receiver.up();
    const c = await newCase(receiver, { WEBHOOK_STRAIGHT_WAIT_MS: '200', WEBHOOK_TIMEOUT_MS: '3000' });
    try {
      const event = c.event(1);
      const started = Date.now();
      await c.delivery.publish(event);
      expect(Date.now() - started).toBeLessThan(1_400);
      expect(c.sends()).toBe(1);
      await receiver.waitFor((posts) => posts.length === 1);
      // The copy comes back after the POST's time limit (plus a margin), reads the log, and is deleted unposted.
      await waitFor('the copy handled', async () => (await queueDepth(t.stack, c.config.WEBHOOK_QUEUE_NAME)) === 0, {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      expect(receiver.posts).toHaveLength(1);
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });
});

async function registeredFor(c: Case, receiver: WebhookReceiver) {
  return (await registerWebhook(tableOf(c.config, t.stack.clients), { url: receiver.url, accountId: c.accountId })).registration;
}

/** Messages in a queue: visible, in flight or delayed. */
async function queueDepth(testStack: TestStack, name: string): Promise<number> {
  const { Attributes: a = {} } = await testStack.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: await resolveQueueUrl(testStack.clients.sqs, name),
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return (
    Number(a.ApproximateNumberOfMessages ?? 0) +
    Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}
