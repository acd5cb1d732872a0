import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../core/config.js';
import { messageEventFor } from '../../../core/message-event.js';
import { resolveQueueUrl, type Queues } from '../../../core/queues.js';
import { webhookBody, webhookEventSchema, type WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { updateChat } from '../../../core/store/chats.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { listDeliveries } from '../../../core/store/webhook-deliveries.js';
import { deleteWebhook, registerWebhook } from '../../../core/store/webhooks.js';
import { startWebhookDelivery, type WebhookDelivery } from '../../../connector/webhooks/delivery-worker.js';
import { EventBridgeDouble } from '../../support/eventbridge-double.js';
import { startTestApi, type TestApi } from '../../support/test-api.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';
import { workerQueues } from './worker-queues.js';

/**
 * AWS event targets through the real delivery worker: SQS queues of the embedded SQS (an ARN
 * names the queue of that name there, whatever its region and account), and EventBridge buses
 * on a double speaking EventBridge's JSON protocol (test/support/eventbridge-double.ts), with the
 * retries, deliveries log, dead-letter queue and replay of HTTP webhooks.
 */
const ACCOUNT = '000000000000';
const ALLOWED = `arn:aws:sqs:*:${ACCOUNT}:aws-target-*,arn:aws:events:*:${ACCOUNT}:event-bus/gateway-*`;

let stack: TestStack;
let api: TestApi;
let table: Table;
let seq = 0;

beforeAll(async () => {
  stack = await startTestStack({ overrides: { EVENT_TARGET_ARNS: ALLOWED } });
  api = await startTestApi(stack);
  table = tableOf(stack.config, stack.clients);
});
afterAll(async () => {
  await api?.close();
  await stack?.stop();
});

const sqsArn = (name: string, region = 'us-east-1') => `arn:aws:sqs:${region}:${ACCOUNT}:${name}`;

async function createQueue(name: string): Promise<string> {
  const fifo = name.endsWith('.fifo');
  const created = await stack.clients.sqs.send(
    new CreateQueueCommand({ QueueName: name, ...(fifo ? { Attributes: { FifoQueue: 'true' } } : {}) }),
  );
  if (!created.QueueUrl) throw new Error(`no URL for ${name}`);
  return created.QueueUrl;
}

/**
 * Receives (and deletes) until `count` messages came, with their attributes: a FIFO group hands
 * out its next message only once the one before is deleted.
 */
async function receive(queueUrl: string, count: number): Promise<Message[]> {
  const messages: Message[] = [];
  await waitFor(`${count} messages in ${queueUrl}`, async () => {
    const answer = await stack.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 600,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId', 'MessageDeduplicationId'],
      }),
    );
    for (const message of answer.Messages ?? []) {
      messages.push(message);
      await stack.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
    }
    return messages.length >= count;
  });
  expect(messages).toHaveLength(count);
  return messages;
}

async function depth(queueUrl: string): Promise<number> {
  const { Attributes: a = {} } = await stack.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return (
    Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible) + Number(a.ApproximateNumberOfMessagesDelayed)
  );
}

const attributesOf = (message: Message | undefined) =>
  Object.fromEntries(Object.entries(message?.MessageAttributes ?? {}).map(([name, value]) => [name, [value.DataType, value.StringValue]]));

/** A worker on queues of its own (short retries), with EVENT_TARGET_ARNS as the API has it unless told. */
async function newRun(overrides: Record<string, string> = {}) {
  seq += 1;
  const { config, queues } = await workerQueues(stack, { EVENT_TARGET_ARNS: ALLOWED, ...overrides });
  return runOn(config, queues);
}

function runOn(config: Config, queues: Queues) {
  const accountId = `awst${seq}x${Date.now().toString(36)}`;
  const registered: Array<{ url: string; accountId?: string }> = [];
  let worker: WebhookDelivery | undefined;
  let n = 0;
  return {
    config,
    accountId,
    start() {
      worker = startWebhookDelivery({ config, clients: stack.clients, logger: silentLogger, queues, registrationCacheMs: 0 });
    },
    /** Registers a target for this run's account only (other cases' events never reach it). */
    async register(url: string, events: Array<'message' | 'message.status' | '*'> = ['message']): Promise<string> {
      const { registration } = await registerWebhook(table, { url, accountId, events });
      registered.push({ url, accountId });
      return registration.webhookId;
    },
    /** A `message` event with an emoji (a character SQS emulators refuse raw), or a `message.status` event. */
    async send(kind: 'message' | 'message.status' = 'message'): Promise<WebhookEvent> {
      n += 1;
      const message = {
        messageId: `3EB0AWST${seq}N${n}`,
        from: '15550002222@s.whatsapp.net',
        chatId: '15550002222@s.whatsapp.net',
        timestamp: 1_767_000_000_000 + n,
        type: 'text',
        fromMe: false,
        text: `hello ${n} 👋`,
      } as const;
      const event: WebhookEvent =
        kind === 'message'
          ? messageEventFor(accountId, message)
          : {
              eventId: `${accountId}:${message.messageId}:status:read`,
              accountId,
              event: 'message.status',
              body: { messageId: message.messageId, chatId: message.chatId, status: 'read', timestamp: message.timestamp },
              createdAt: Date.now(),
            };
      await queues.sendWebhookEvent(event);
      return event;
    },
    async drained(): Promise<void> {
      const url = await resolveQueueUrl(stack.clients.sqs, config.WEBHOOK_QUEUE_NAME);
      await waitFor('webhook queue drained', async () => (await depth(url)) === 0, { timeoutMs: 30_000 });
    },
    /** The given-up events in the DLQ, with their `lastError` attribute. */
    async deadLetters(count: number): Promise<Array<{ event: WebhookEvent; lastError: string | undefined }>> {
      const messages = await receive(await resolveQueueUrl(stack.clients.sqs, config.WEBHOOK_DLQ_NAME), count);
      return messages.map((m) => ({
        event: webhookEventSchema.parse(JSON.parse(m.Body ?? '')),
        lastError: m.MessageAttributes?.lastError?.StringValue,
      }));
    },
    async stop() {
      await worker?.stop();
      for (const r of registered) await deleteWebhook(table, r.url, r.accountId);
    },
  };
}

describe('SQS queue targets (the embedded SQS)', { timeout: 90_000 }, () => {
  it('registered through the API: the body is the message body, with webhook-id, webhook-event and webhook-attempt; the log says delivered', async () => {
    const run = await newRun();
    const name = `aws-target-std-${seq}`;
    const queueUrl = await createQueue(name);
    const registered = await api.call('POST', '/webhooks', { url: sqsArn(name), events: ['message', 'message.status'] });
    expect(registered.status).toBe(201);
    const webhookId = String((registered.body.webhook as { webhookId: string }).webhookId);
    try {
      run.start();
      const event = await run.send();
      const [message] = await receive(queueUrl, 1);
      expect(JSON.parse(message?.Body ?? '')).toEqual(webhookBody(event));
      expect(attributesOf(message)).toEqual({
        'webhook-id': ['String', event.eventId],
        'webhook-event': ['String', 'message'],
        'webhook-attempt': ['Number', '1'],
      });
      const status = await run.send('message.status');
      const [statusMessage] = await receive(queueUrl, 1);
      expect(JSON.parse(statusMessage?.Body ?? '')).toEqual(webhookBody(status));
      expect(attributesOf(statusMessage)['webhook-event']).toEqual(['String', 'message.status']);
      await run.drained();
      await waitFor('both deliveries logged', async () => {
        const answer = await api.call('GET', `/webhooks/${webhookId}/deliveries`);
        return (answer.body.deliveries as unknown[]).length === 2 && answer;
      });
      const logged = (await api.call('GET', `/webhooks/${webhookId}/deliveries`)).body.deliveries;
      expect(logged).toEqual(
        [status, event].map((e) => ({
          eventId: e.eventId,
          event: e.event,
          status: 'delivered',
          attempts: 1,
          lastAttemptAt: expect.any(Number),
        })),
      );
    } finally {
      await api.call('DELETE', `/webhooks/${webhookId}`);
      await run.stop();
    }
  });

  it('a FIFO queue: the account is the message group, the event id the deduplication id', async () => {
    const run = await newRun();
    const name = `aws-target-fifo-${seq}.fifo`;
    const queueUrl = await createQueue(name);
    try {
      await run.register(sqsArn(name, 'eu-west-3'), ['*']);
      run.start();
      const events = [await run.send(), await run.send('message.status')];
      const messages = await receive(queueUrl, 2);
      const byId = new Map(messages.map((m) => [m.MessageAttributes?.['webhook-id']?.StringValue, m]));
      for (const event of events) {
        const message = byId.get(event.eventId);
        expect(message?.Attributes).toEqual({ MessageGroupId: run.accountId, MessageDeduplicationId: event.eventId });
        expect(JSON.parse(message?.Body ?? '')).toEqual(webhookBody(event));
      }
      await run.drained();
    } finally {
      await run.stop();
    }
  });

  it('a missing queue: each attempt fails and is logged as QueueDoesNotExist, then the event is dead-lettered for that webhook', async () => {
    const run = await newRun({ WEBHOOK_MAX_ATTEMPTS: '3' });
    const arn = sqsArn(`aws-target-missing-${seq}`);
    try {
      const webhookId = await run.register(arn);
      run.start();
      const event = await run.send();
      const pending = await waitFor('a pending entry', async () => {
        const [entry] = await listDeliveries(table, webhookId, { status: 'pending', limit: 10 });
        return entry;
      });
      expect(pending).toMatchObject({ eventId: event.eventId, attempts: 1, lastError: 'QueueDoesNotExist' });
      const [dead] = await run.deadLetters(1);
      expect(dead).toEqual({ event: { ...event, webhookId }, lastError: `${arn}: QueueDoesNotExist` });
      await run.drained();
      const [failed] = await listDeliveries(table, webhookId, { limit: 10 });
      expect(failed).toMatchObject({ eventId: event.eventId, status: 'failed', attempts: 3, lastError: 'QueueDoesNotExist' });
    } finally {
      await run.stop();
    }
  });

  it('a queue made after an attempt failed gets the event on a retry (a failed lookup is not kept)', async () => {
    const run = await newRun({ WEBHOOK_MAX_ATTEMPTS: '6' });
    const name = `aws-target-late-${seq}`;
    try {
      const webhookId = await run.register(sqsArn(name));
      run.start();
      const event = await run.send();
      await waitFor(
        'the first attempt failed',
        async () => (await listDeliveries(table, webhookId, { status: 'pending', limit: 1 })).length === 1,
      );
      const queueUrl = await createQueue(name);
      const [message] = await receive(queueUrl, 1);
      expect(attributesOf(message)['webhook-id']).toEqual(['String', event.eventId]);
      expect(Number(message?.MessageAttributes?.['webhook-attempt']?.StringValue)).toBeGreaterThan(1);
      await run.drained();
    } finally {
      await run.stop();
    }
  });

  it('a target no longer in EVENT_TARGET_ARNS: dead-lettered on the first attempt, nothing sent', async () => {
    const run = await newRun({ EVENT_TARGET_ARNS: sqsArn('aws-target-other') });
    const name = `aws-target-dropped-${seq}`;
    const queueUrl = await createQueue(name);
    try {
      const webhookId = await run.register(sqsArn(name));
      run.start();
      const event = await run.send();
      const [dead] = await run.deadLetters(1);
      expect(dead).toEqual({ event: { ...event, webhookId }, lastError: `${sqsArn(name)}: target not allowed (not in EVENT_TARGET_ARNS)` });
      await run.drained();
      expect(await depth(queueUrl)).toBe(0);
      expect(await listDeliveries(table, webhookId, { limit: 10 })).toMatchObject([{ status: 'failed', attempts: 1 }]);
    } finally {
      await run.stop();
    }
  });

  it('replay: the stored messages go to the queue again, with their original webhook-id', async () => {
    seq += 1;
    // The API's own webhook queue, which the replay fills.
    const { config, queues } = await workerQueues(stack, {
      EVENT_TARGET_ARNS: ALLOWED,
      WEBHOOK_QUEUE_NAME: stack.config.WEBHOOK_QUEUE_NAME,
      WEBHOOK_DLQ_NAME: stack.config.WEBHOOK_DLQ_NAME,
    });
    const run = runOn(config, queues);
    const name = `aws-target-replay-${seq}`;
    const queueUrl = await createQueue(name);
    expect((await api.call('POST', '/accounts', { id: run.accountId })).status).toBe(201);
    const registered = await api.call('POST', `/accounts/${run.accountId}/webhooks`, { url: sqsArn(name) });
    expect(registered.status).toBe(201);
    const webhookId = String((registered.body.webhook as { webhookId: string }).webhookId);
    try {
      const chatId = '15550003333@s.whatsapp.net';
      const stored = {
        messageId: `3EB0REPLAY${seq}`,
        from: chatId,
        chatId,
        timestamp: 1_650_000_000_000,
        type: 'text',
        fromMe: false,
        text: 'again',
      } as const;
      await putMessage(table, run.accountId, stored);
      await updateChat(table, run.accountId, chatId, { at: stored.timestamp, unread: 1 });
      run.start();
      const replay = await api.call('POST', `/accounts/${run.accountId}/webhooks/${webhookId}/replay`, {
        since: stored.timestamp - 1,
        until: stored.timestamp + 1,
      });
      expect(replay).toMatchObject({ status: 202, body: { ok: true, queued: 1 } });
      const [message] = await receive(queueUrl, 1);
      expect(JSON.parse(message?.Body ?? '')).toEqual(webhookBody(messageEventFor(run.accountId, stored)));
      expect(attributesOf(message)['webhook-id']).toEqual(['String', `${run.accountId}:${stored.messageId}`]);
      await run.drained();
    } finally {
      await api.call('DELETE', `/webhooks/${webhookId}`);
      await run.stop();
    }
  });
});

describe('EventBridge bus targets (a double of its PutEvents)', { timeout: 90_000 }, () => {
  const busArn = (name: string, region = 'eu-west-1') => `arn:aws:events:${region}:${ACCOUNT}:event-bus/${name}`;

  async function withDouble(double: EventBridgeDouble, body: () => Promise<void>): Promise<void> {
    await double.start();
    try {
      await body();
    } finally {
      await double.stop();
    }
  }

  it('one entry per event: source wa-gateway, detail-type the event name, detail the JSON body, the bus by its ARN; signed for its region', async () => {
    const double = new EventBridgeDouble();
    await withDouble(double, async () => {
      const run = await newRun({ AWS_ENDPOINT_URL_EVENTBRIDGE: double.endpoint });
      const arn = busArn(`gateway-${seq}`, 'ap-southeast-2');
      try {
        const webhookId = await run.register(arn, ['*']);
        run.start();
        const message = await run.send();
        await double.waitForEntries(1);
        const status = await run.send('message.status');
        await double.waitForEntries(2);
        expect(double.entries()).toEqual(
          [message, status].map((event) => ({
            Source: 'wa-gateway',
            DetailType: event.event,
            Detail: JSON.stringify(webhookBody(event)),
            EventBusName: arn,
          })),
        );
        expect(double.calls.map((call) => [call.headers['content-type'], call.signedRegion])).toEqual([
          ['application/x-amz-json-1.1', 'ap-southeast-2'],
          ['application/x-amz-json-1.1', 'ap-southeast-2'],
        ]);
        await run.drained();
        await waitFor(
          'both deliveries logged',
          async () => (await listDeliveries(table, webhookId, { status: 'delivered', limit: 10 })).length === 2,
        );
      } finally {
        await run.stop();
      }
    });
  });

  it('a failed entry (FailedEntryCount > 0) is a failure with its error code: retried, then delivered', async () => {
    const double = new EventBridgeDouble((_entry, count) => (count === 1 ? { errorCode: 'ThrottlingException' } : 'accepted'));
    await withDouble(double, async () => {
      const run = await newRun({ AWS_ENDPOINT_URL_EVENTBRIDGE: double.endpoint });
      try {
        const webhookId = await run.register(busArn(`gateway-${seq}`));
        run.start();
        const event = await run.send();
        const pending = await waitFor('the failed attempt logged', async () => {
          const [entry] = await listDeliveries(table, webhookId, { limit: 1 });
          return entry;
        });
        expect(pending).toMatchObject({ eventId: event.eventId, status: 'pending', attempts: 1, lastError: 'ThrottlingException' });
        await double.waitForEntries(2);
        await run.drained();
        expect(double.entries().map((entry) => entry.Detail)).toEqual([
          JSON.stringify(webhookBody(event)),
          JSON.stringify(webhookBody(event)),
        ]);
        await waitFor('the delivery logged', async () => {
          const [entry] = await listDeliveries(table, webhookId, { limit: 1 });
          return entry?.status === 'delivered' && entry.attempts === 2;
        });
      } finally {
        await run.stop();
      }
    });
  });

  it('a bus whose entries keep failing: dead-lettered after WEBHOOK_MAX_ATTEMPTS with the error code', async () => {
    const double = new EventBridgeDouble(() => ({ errorCode: 'AccessDeniedException' }));
    await withDouble(double, async () => {
      const run = await newRun({ AWS_ENDPOINT_URL_EVENTBRIDGE: double.endpoint, WEBHOOK_MAX_ATTEMPTS: '2' });
      const arn = busArn(`gateway-${seq}`);
      try {
        const webhookId = await run.register(arn);
        run.start();
        const event = await run.send();
        const [dead] = await run.deadLetters(1);
        expect(dead).toEqual({ event: { ...event, webhookId }, lastError: `${arn}: AccessDeniedException` });
        expect(double.entries()).toHaveLength(2);
        await run.drained();
      } finally {
        await run.stop();
      }
    });
  });
});
