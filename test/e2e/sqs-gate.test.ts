import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClients, destroyClients, type AwsClients } from '../../core/aws.js';
import { loadConfig } from '../../core/config.js';
import { createQueues, type Queues } from '../../core/queues.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';
import { silentLogger, startTestStack, type TestStack } from '../support/test-stack.js';
import { waitFor } from '../support/wait.js';
import { startSqsGate, type SqsGate } from './support/sqs-gate.js';

/**
 * The crash suites' SQS gate itself: a picked event is kept out of the queue, and the events
 * that travel in the same batch request still reach it (their callers are answered), so one held
 * event never holds up the handling of another account.
 */
describe('the SQS gate of the crash suites', () => {
  let stack: TestStack;
  let gate: SqsGate;
  let gatedClients: AwsClients;
  let gated: Queues;
  let direct: Queues;

  const event = (eventId: string): WebhookEvent => ({
    eventId,
    accountId: eventId.split(':')[0] ?? 'gate',
    event: 'message.status',
    body: { messageId: 'M1', chatId: '15550000001@s.whatsapp.net', status: 'delivered', timestamp: 1 },
    createdAt: Date.now(),
  });
  const drain = async (want: number) => {
    const ids: string[] = [];
    await waitFor(`${want} events in the queue`, async () => {
      for (const received of await direct.receiveWebhookEvents({ waitSeconds: 1 })) {
        ids.push(received.body.eventId);
        await direct.ackWebhookEvent(received.receiptHandle);
      }
      return ids.length >= want;
    });
    return ids.sort();
  };

  beforeAll(async () => {
    stack = await startTestStack();
    gate = await startSqsGate(stack.env.AWS_ENDPOINT_URL_SQS ?? '', stack.config.WEBHOOK_QUEUE_NAME);
    const gatedConfig = loadConfig({ ...stack.env, LOG_LEVEL: 'silent', AWS_ENDPOINT_URL_SQS: gate.url });
    gatedClients = createClients(gatedConfig);
    gated = createQueues(gatedConfig, gatedClients, silentLogger);
    direct = createQueues(stack.config, stack.clients, silentLogger);
  });
  afterAll(async () => {
    if (gatedClients) destroyClients(gatedClients);
    await gate?.close();
    await stack?.stop();
  });

  it('a batch mixing a picked event with others: the others are sent and answered, the picked one fails and stays out', async () => {
    gate.hold = (eventId) => eventId === 'gatea:M1:status:delivered';
    // Added together, the three travel in one SendMessageBatch.
    const outcomes = await Promise.allSettled(
      ['gatea:M1:status:delivered', 'gateb:M1:status:delivered', 'gatec:M1:status:delivered'].map((id) =>
        gated.sendWebhookEvent(event(id)),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(await drain(2)).toEqual(['gateb:M1:status:delivered', 'gatec:M1:status:delivered']);
    expect([...gate.held]).toEqual(['gatea:M1:status:delivered']);
  });

  it('a request carrying only picked events is never answered, and later ones pass beside it', async () => {
    gate.hold = (eventId) => eventId.startsWith('gated:');
    let settled = false;
    // Never answered; when the gate closes at the end, the SDK's retries are refused: not this case's subject.
    void gated
      .sendWebhookEvent(event('gated:M1:status:delivered'))
      .finally(() => {
        settled = true;
      })
      .catch(() => undefined);
    await waitFor('the lone picked event to be held', () => gate.held.has('gated:M1:status:delivered'));
    await gated.sendWebhookEvent(event('gatee:M1:status:delivered'));
    expect(await drain(1)).toEqual(['gatee:M1:status:delivered']);
    expect(settled).toBe(false);
  });
});
