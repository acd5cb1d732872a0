import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../core/config.js';
import { createQueues, resolveQueueUrl, type Queues } from '../../../core/queues.js';
import { WEBHOOK_MAX_RECEIVE_COUNT } from '../../../core/resources.js';
import { webhookBody, webhookEventSchema, type WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { tableOf } from '../../../core/store/table.js';
import { listDeliveries } from '../../../core/store/webhook-deliveries.js';
import { createClients, destroyClients } from '../../../core/aws.js';
import { deleteWebhook, registerWebhook } from '../../../core/store/webhooks.js';
import { startWebhookDelivery, type WebhookDelivery } from '../../../connector/webhooks/delivery-worker.js';
import { minimumRetrySpanSeconds } from '../../../connector/webhooks/backoff.js';
import { logSink } from '../../support/log-sink.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';
import { simulatedDelay, waitFor } from '../../support/wait.js';
import { workerQueues } from './worker-queues.js';
import { messageEventFor } from '../../../core/message-event.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { countRequests } from '../../support/counted-table.js';

let stack: TestStack;
let caseSeq = 0;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

interface Case {
  config: Config;
  queues: Queues;
  worker: WebhookDelivery | undefined;
  urls: string[];
  start(): void;
  /** Registers a global `message` webhook; answers its id. */
  register(url: string): Promise<string>;
  event(n: number): WebhookEvent;
  /** Messages left in the webhook queue (visible, in flight or delayed). */
  queueDepth(name?: string): Promise<number>;
  dlqEvents(timeoutMs?: number): Promise<WebhookEvent[]>;
  cleanUp(): Promise<void>;
}

/**
 * Each case gets its own webhook queue and DLQ (so no event of another case reaches its
 * receiver) and a worker with short retry and probe delays; the emulators are shared.
 */
async function newCase(overrides: Record<string, string> = {}): Promise<Case> {
  caseSeq += 1;
  const { config, queues } = await workerQueues(stack, overrides);
  const table = tableOf(config, stack.clients);
  const accountId = `acct${caseSeq}`;
  const c: Case = {
    config,
    queues,
    worker: undefined,
    urls: [],
    start() {
      c.worker = startWebhookDelivery({ config, clients: stack.clients, logger: silentLogger, queues, registrationCacheMs: 0 });
    },
    async register(url) {
      const { registration } = await registerWebhook(table, url);
      c.urls.push(url);
      return registration.webhookId;
    },
    event(n) {
      const peer = '15550002222@s.whatsapp.net';
      const messageId = `3EB0CASE${caseSeq}N${n}`;
      const message = {
        messageId,
        from: peer,
        chatId: peer,
        timestamp: 1_767_000_000_000 + n,
        type: 'text',
        fromMe: false,
        text: `hello ${n} 👋`,
      } as const;
      return messageEventFor(accountId, message);
    },
    async queueDepth(name = config.WEBHOOK_QUEUE_NAME) {
      const url = await resolveQueueUrl(stack.clients.sqs, name);
      const result = await stack.clients.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      const a = result.Attributes ?? {};
      return (
        Number(a.ApproximateNumberOfMessages ?? 0) +
        Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
        Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
      );
    },
    async dlqEvents(timeoutMs = 30_000) {
      const dlqQueues = createQueues({ ...config, WEBHOOK_QUEUE_NAME: config.WEBHOOK_DLQ_NAME }, stack.clients, silentLogger);
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const received = await dlqQueues.receiveWebhookEvents({ waitSeconds: 1 });
        if (received.length > 0) return received.map((r) => webhookEventSchema.parse(r.body));
      }
      return [];
    },
    async cleanUp() {
      await c.worker?.stop();
      for (const url of c.urls) await deleteWebhook(table, url);
    },
  };
  return c;
}

/** Until the webhook queue is empty: every event acked or moved to the DLQ. */
async function drained(c: Case): Promise<void> {
  await waitFor('webhook queue drained', async () => (await c.queueDepth()) === 0, { timeoutMs: 30_000 });
}

describe('webhook delivery', () => {
  it('POSTs exactly the spec payload as JSON with X-Webhook-Id and User-Agent, then acks', async () => {
    const c = await newCase();
    const receiver = new WebhookReceiver();
    try {
      await receiver.up();
      await c.register(receiver.url);
      c.start();
      const event = c.event(1);
      await c.queues.sendWebhookEvent(event);
      await receiver.waitFor((posts) => posts.length === 1);
      await drained(c);

      const [post] = receiver.posts;
      expect(post?.body).toEqual(webhookBody(event));
      expect(Object.keys(post?.body as object).sort()).toEqual([
        'accountId',
        'chatId',
        'event',
        'from',
        'fromMe',
        'message',
        'messageId',
        'timestamp',
        'type',
      ]);
      expect(post?.headers['content-type']).toBe('application/json');
      expect(post?.headers['x-webhook-id']).toBe(event.eventId);
      expect(post?.headers['x-webhook-event']).toBe('message');
      expect(post?.headers['user-agent']).toMatch(/^wa-gateway-webhooks\//);
      expect(receiver.posts).toHaveLength(1);
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('receiver down, then up: every event arrives exactly once per X-Webhook-Id', async () => {
    const c = await newCase({ WEBHOOK_MAX_ATTEMPTS: '5' });
    const receiver = new WebhookReceiver();
    try {
      await receiver.up();
      await c.register(receiver.url);
      await receiver.down();
      c.start();
      const events = [c.event(1), c.event(2), c.event(3)];
      for (const event of events) await c.queues.sendWebhookEvent(event);
      // Down for a while: every event fails at least twice (first attempt and first retry).
      await receiver.waitFor((_posts, r) => r.refused >= 2 * events.length);
      await receiver.up();
      await receiver.waitFor((posts) => events.every((e) => posts.some((p) => p.headers['x-webhook-id'] === e.eventId)));
      await drained(c);
      for (const event of events) expect(receiver.countFor(event.eventId)).toBe(1);
      expect(receiver.posts).toHaveLength(3);
      for (const post of receiver.posts) expect(Number(post.headers['x-webhook-attempt'])).toBeGreaterThan(2);
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('a receiver answering 500 for a while: only probes reach it while down, and every event arrives once it answers 2xx', async () => {
    const c = await newCase({
      WEBHOOK_MAX_ATTEMPTS: '10',
      WEBHOOK_CIRCUIT_FAILURES: '3',
    });
    let down = true;
    const receiver = new WebhookReceiver(() => (down ? 500 : 200));
    const events = Array.from({ length: 20 }, (_, i) => c.event(i + 1));
    try {
      await receiver.up();
      await c.register(receiver.url);
      for (const event of events) await c.queues.sendWebhookEvent(event);
      c.start();
      // Down until some event comes round for its 5th attempt (0.5 + 1 + 2 + 4 s of backoff at
      // the least): without a circuit every event would have been POSTed about four times by now.
      await receiver.waitFor((posts) => posts.some((p) => Number(p.headers['x-webhook-attempt']) >= 5), 60_000);
      const postsWhileDown = receiver.posts.length;
      expect(postsWhileDown).toBeLessThan(2 * events.length);

      down = false;
      const answeredOk = () => receiver.posts.slice(postsWhileDown);
      await receiver.waitFor(() => events.every((e) => answeredOk().some((p) => p.headers['x-webhook-id'] === e.eventId)), 60_000);
      await drained(c);
      expect(await c.dlqEvents(1_000)).toEqual([]);
      for (const event of events) expect(answeredOk().filter((p) => p.headers['x-webhook-id'] === event.eventId)).toHaveLength(1);
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('a receiver that always answers 4xx: the event ends in the DLQ, naming its webhook, after the configured attempts', async () => {
    const c = await newCase({ WEBHOOK_MAX_ATTEMPTS: '3' });
    const receiver = new WebhookReceiver(() => 400);
    try {
      await receiver.up();
      const webhookId = await c.register(receiver.url);
      c.start();
      const event = c.event(1);
      await c.queues.sendWebhookEvent(event);

      const dead = await c.dlqEvents();
      expect(dead).toEqual([{ ...event, webhookId }]);
      expect(receiver.countFor(event.eventId)).toBe(3);
      expect(receiver.posts.map((p) => p.headers['x-webhook-attempt'])).toEqual(['1', '2', '3']);
      await drained(c);
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('two URLs, one failing for a while: the good one gets the event once, the other on retry', async () => {
    const c = await newCase({ WEBHOOK_MAX_ATTEMPTS: '4' });
    const good = new WebhookReceiver();
    const flaky = new WebhookReceiver((_post, count) => (count <= 2 ? 503 : 200));
    try {
      await good.up();
      await flaky.up();
      await c.register(good.url);
      await c.register(flaky.url);
      c.start();
      const event = c.event(1);
      await c.queues.sendWebhookEvent(event);

      await flaky.waitFor((posts) => posts.length === 3);
      await drained(c);
      expect(good.countFor(event.eventId)).toBe(1);
      expect(flaky.countFor(event.eventId)).toBe(3);
      expect(good.posts[0]?.body).toEqual(webhookBody(event));
    } finally {
      await c.cleanUp();
      await good.close();
      await flaky.close();
    }
  });

  it('a receiver slower than the timeout counts as a failure and is retried', async () => {
    const c = await newCase({ WEBHOOK_TIMEOUT_MS: '300', WEBHOOK_MAX_ATTEMPTS: '3' });
    // A receiver that answers the first POST well after the 300 ms timeout.
    const receiver = new WebhookReceiver(async (_post, count) => {
      if (count === 1) await simulatedDelay(1_500);
      return 200;
    });
    try {
      await receiver.up();
      await c.register(receiver.url);
      c.start();
      const event = c.event(1);
      await c.queues.sendWebhookEvent(event);
      await receiver.waitFor((posts) => posts.length === 2);
      await drained(c);
      expect(receiver.posts.map((p) => p.headers['x-webhook-attempt'])).toEqual(['1', '2']);
    } finally {
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('events delivered a moment apart: their deletes and log entries share one request each, and stop() sends them', async () => {
    const c = await newCase();
    // Clients of its own, with every request counted (the shared clients' batchers serve other cases).
    const clients = createClients(c.config);
    const counts = countRequests(clients);
    const queues = createQueues(c.config, clients, silentLogger);
    const receiver = new WebhookReceiver();
    let worker: WebhookDelivery | undefined;
    try {
      await receiver.up();
      const webhookId = await c.register(receiver.url);
      worker = startWebhookDelivery({ config: c.config, clients, logger: silentLogger, queues, registrationCacheMs: 0 });
      const events = [c.event(1), c.event(2), c.event(3)];
      for (const [n, event] of events.entries()) {
        await c.queues.sendWebhookEvent(event);
        // Each one POSTed before the next is queued: three receives, three deliveries.
        await receiver.waitFor((posts) => posts.length === n + 1);
      }
      const stopping = worker.stop();
      worker = undefined;
      await stopping;

      expect(await c.queueDepth()).toBe(0);
      expect(counts.get('DeleteMessageBatchCommand')).toBe(1);
      expect(counts.get('BatchWriteItemCommand')).toBe(1);
      const logged = await listDeliveries(tableOf(c.config, stack.clients), webhookId, { limit: 10 });
      expect(logged.map((d) => `${d.eventId} ${d.status}`).sort()).toEqual(events.map((e) => `${e.eventId} delivered`).sort());
    } finally {
      await worker?.stop();
      destroyClients(clients);
      await c.cleanUp();
      await receiver.close();
    }
  });

  it('stop() waits for an in-flight POST to finish and acks it', async () => {
    const c = await newCase();
    let release: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      release = resolve;
    });
    const receiver = new WebhookReceiver(async () => {
      await answered;
      return 200;
    });
    try {
      await receiver.up();
      await c.register(receiver.url);
      c.start();
      await c.queues.sendWebhookEvent(c.event(1));
      await receiver.waitFor((posts) => posts.length === 1);
      const stopping = c.worker!.stop();
      release();
      await stopping;
      expect(await c.queueDepth()).toBe(0);
    } finally {
      release();
      await c.cleanUp();
      await receiver.close();
    }
  });
});

describe('configuration check', () => {
  it('warns at start when WEBHOOK_MAX_ATTEMPTS exceeds the queue redrive limit', async () => {
    const c = await newCase({ WEBHOOK_MAX_ATTEMPTS: String(WEBHOOK_MAX_RECEIVE_COUNT + 1) });
    const { logger, lines } = logSink('warn');
    const worker = startWebhookDelivery({
      config: c.config,
      clients: stack.clients,
      logger,
      queues: c.queues,
    });
    try {
      await waitFor(
        'the redrive warning',
        () => lines.some((l) => l.maxReceiveCount === WEBHOOK_MAX_RECEIVE_COUNT && l.maxAttempts === WEBHOOK_MAX_RECEIVE_COUNT + 1),
        { timeoutMs: 15_000 },
      );
    } finally {
      await worker.stop();
    }
  });
});

describe('retry schedule', () => {
  it('defaults keep retrying for hours, within the queue redrive limit', () => {
    const defaults = loadConfig({});
    expect(minimumRetrySpanSeconds(defaults.WEBHOOK_MAX_ATTEMPTS, defaults.WEBHOOK_RETRY_BASE_MS)).toBeGreaterThanOrEqual(4 * 60 * 60);
    expect(defaults.WEBHOOK_MAX_ATTEMPTS).toBeLessThanOrEqual(WEBHOOK_MAX_RECEIVE_COUNT);
  });
});
