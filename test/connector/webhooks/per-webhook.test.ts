import { createHmac, timingSafeEqual } from 'node:crypto';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookKey } from '../../../core/keys.js';
import { resolveQueueUrl } from '../../../core/queues.js';
import type { WebhookRegistration } from '../../../core/schemas/webhook.js';
import { webhookBody, webhookEventId, type WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { deleteWebhook } from '../../../core/store/webhooks.js';
import { startWebhookDelivery, type WebhookDelivery } from '../../../connector/webhooks/delivery-worker.js';
import { startTestApi, type TestApi } from '../../support/test-api.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';
import { WebhookReceiver, type ReceivedPost } from '../../support/webhook-receiver.js';
import { workerQueues } from './worker-queues.js';

let stack: TestStack;
let api: TestApi;
let table: Table;
let seq = 0;

beforeAll(async () => {
  stack = await startTestStack();
  api = await startTestApi(stack);
  table = tableOf(stack.config, stack.clients);
});
afterAll(async () => {
  await api?.close();
  await stack?.stop();
});

/**
 * A registration as the store keeps it, written directly: scope, filter and secret without
 * going through the registration routes (functions/webhooks/registrations.ts is tested on its own).
 */
async function putRegistration(registration: WebhookRegistration): Promise<void> {
  await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...webhookKey(registration.url), ...registration } }));
}

/** A worker on its own queues (short retries), the webhooks it registered, its events. */
async function newRun(overrides: Record<string, string> = {}, registrationCacheMs = 0) {
  seq += 1;
  const { config, queues } = await workerQueues(stack, { WEBHOOK_MAX_ATTEMPTS: '6', ...overrides });
  const registered: string[] = [];
  let worker: WebhookDelivery | undefined;
  let n = 0;
  return {
    queues,
    start() {
      worker = startWebhookDelivery({ config, clients: stack.clients, logger: silentLogger, queues, registrationCacheMs });
    },
    async register(
      receiver: WebhookReceiver,
      options: Partial<Pick<WebhookRegistration, 'accountId' | 'events' | 'secret'>> = {},
    ): Promise<string> {
      const webhookId = `wh_test${seq}x${registered.length}`;
      await putRegistration({ webhookId, url: receiver.url, events: ['message'], createdAt: new Date().toISOString(), ...options });
      registered.push(receiver.url);
      return webhookId;
    },
    async unregister(receiver: WebhookReceiver): Promise<void> {
      await deleteWebhook(table, receiver.url);
    },
    /** A `message` event (or `message.status` when asked) of `accountId`, queued at a later time than the one before. */
    async send(accountId = `pw${seq}`, kind: 'message' | 'message.status' = 'message', webhookId?: string): Promise<WebhookEvent> {
      n += 1;
      const messageId = `3EB0PW${seq}N${n}`;
      const timestamp = 1_767_000_000_000 + n;
      const event: WebhookEvent = {
        eventId: kind === 'message' ? webhookEventId(accountId, messageId) : `${webhookEventId(accountId, messageId)}:status:read`,
        accountId,
        event: kind,
        body:
          kind === 'message'
            ? {
                from: '15550002222@s.whatsapp.net',
                message: `hello ${n}`,
                messageId,
                timestamp,
                chatId: '15550002222@s.whatsapp.net',
                fromMe: false,
                type: 'text',
              }
            : { messageId, chatId: '15550002222@s.whatsapp.net', status: 'read', timestamp },
        createdAt: Date.now() + n,
        ...(webhookId ? { webhookId } : {}),
      };
      await queues.sendWebhookEvent(event);
      return event;
    },
    /** Until every event is acked (or dead-lettered). */
    async drained(): Promise<void> {
      const url = await resolveQueueUrl(stack.clients.sqs, config.WEBHOOK_QUEUE_NAME);
      await waitFor(
        'webhook queue drained',
        async () => {
          const { Attributes: a = {} } = await stack.clients.sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: url,
              AttributeNames: [
                'ApproximateNumberOfMessages',
                'ApproximateNumberOfMessagesNotVisible',
                'ApproximateNumberOfMessagesDelayed',
              ],
            }),
          );
          return (
            Number(a.ApproximateNumberOfMessages) +
              Number(a.ApproximateNumberOfMessagesNotVisible) +
              Number(a.ApproximateNumberOfMessagesDelayed) ===
            0
          );
        },
        { timeoutMs: 30_000 },
      );
    },
    async stop() {
      await worker?.stop();
      for (const url of registered) await deleteWebhook(table, url);
    },
  };
}

/** What a receiver does with X-Webhook-Signature (as docs/webhooks.md shows it). */
function signatureValid(post: ReceivedPost, secret: string): boolean {
  const header = String(post.headers['x-webhook-signature'] ?? '');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const [, t, v1] = match as unknown as [string, string, string];
  const expected = createHmac('sha256', secret).update(`${t}.${post.raw}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}

const idsOf = (posts: ReceivedPost[]) => posts.map((p) => String(p.headers['x-webhook-id']));

async function withReceivers(count: number, body: (receivers: WebhookReceiver[]) => Promise<void>): Promise<void> {
  const receivers = Array.from({ length: count }, () => new WebhookReceiver());
  try {
    for (const receiver of receivers) await receiver.up();
    await body(receivers);
  } finally {
    for (const receiver of receivers) await receiver.close();
  }
}

describe('webhook delivery per registration', { timeout: 90_000 }, () => {
  it('signs with the secret (t and v1 over the raw body); a webhook without secret gets no signature; both the same X-Webhook-Id', async () => {
    const run = await newRun();
    await withReceivers(2, async ([signed, plain]) => {
      try {
        await run.register(signed!, { secret: 'whsec_test_secret' });
        await run.register(plain!);
        run.start();
        const event = await run.send();
        await signed!.waitFor((posts) => posts.length === 1);
        await plain!.waitFor((posts) => posts.length === 1);
        const [s] = signed!.posts;
        const [p] = plain!.posts;
        expect(signatureValid(s!, 'whsec_test_secret')).toBe(true);
        expect(signatureValid(s!, 'another secret')).toBe(false);
        expect(s!.body).toEqual(webhookBody(event));
        expect(p!.headers['x-webhook-signature']).toBeUndefined();
        expect([s!.headers['x-webhook-id'], p!.headers['x-webhook-id']]).toEqual([event.eventId, event.eventId]);
        expect([s!.headers['x-webhook-attempt'], p!.headers['x-webhook-attempt']]).toEqual(['1', '1']);
        expect(s!.headers['x-webhook-event']).toBe('message');
      } finally {
        await run.stop();
      }
    });
  });

  it('Standard Webhooks: a failed attempt retried keeps its webhook-id; every attempt is signed anew and verifies with the standardwebhooks library', async () => {
    const run = await newRun();
    const secret = `whsec_${Buffer.from('a key of the standard form, 32 bytes').toString('base64')}`;
    await withReceivers(1, async ([flaky]) => {
      try {
        flaky!.setAnswer((_post, countForId) => (countForId === 1 ? 500 : 200));
        await run.register(flaky!, { secret });
        run.start();
        const event = await run.send();
        await flaky!.waitFor((posts) => posts.length === 2);
        for (const post of flaky!.posts) {
          const headers = Object.fromEntries(Object.entries(post.headers).map(([name, value]) => [name, String(value)]));
          expect(headers['webhook-id']).toBe(event.eventId);
          expect(headers['webhook-id']).toBe(headers['x-webhook-id']);
          expect(new Webhook(secret).verify(post.raw, headers)).toEqual(webhookBody(event));
          expect(signatureValid(post, secret)).toBe(true);
        }
        expect(flaky!.posts.map((post) => post.headers['x-webhook-attempt'])).toEqual(['1', '2']);
      } finally {
        await run.stop();
      }
    });
  });

  it('filters: each webhook gets only the events it chose', async () => {
    const run = await newRun();
    await withReceivers(3, async ([statusOnly, messageOnly, everything]) => {
      try {
        await run.register(statusOnly!, { events: ['message.status'] });
        await run.register(messageOnly!, { events: ['message'] });
        await run.register(everything!, { events: ['*'] });
        run.start();
        const message = await run.send();
        const status = await run.send(undefined, 'message.status');
        await everything!.waitFor((posts) => posts.length === 2);
        await run.drained();
        expect(idsOf(statusOnly!.posts)).toEqual([status.eventId]);
        expect(statusOnly!.posts[0]?.headers['x-webhook-event']).toBe('message.status');
        expect(idsOf(messageOnly!.posts)).toEqual([message.eventId]);
        expect(idsOf(everything!.posts).sort()).toEqual([message.eventId, status.eventId].sort());
      } finally {
        await run.stop();
      }
    });
  });

  it("an account-scoped webhook never gets another account's events", async () => {
    const run = await newRun();
    await withReceivers(2, async ([scoped, global]) => {
      try {
        await run.register(scoped!, { accountId: `mine${seq}` });
        await run.register(global!);
        run.start();
        const other = await run.send(`other${seq}`);
        const mine = await run.send(`mine${seq}`);
        await global!.waitFor((posts) => posts.length === 2);
        await run.drained();
        expect(idsOf(scoped!.posts)).toEqual([mine.eventId]);
        expect(idsOf(global!.posts).sort()).toEqual([other.eventId, mine.eventId].sort());
      } finally {
        await run.stop();
      }
    });
  });

  it('a down receiver gets its events later; the other webhook is not held up and gets each once; the deliveries log shows both', async () => {
    const run = await newRun();
    await withReceivers(2, async ([flaky, steady]) => {
      try {
        const flakyId = await run.register(flaky!);
        const steadyId = await run.register(steady!);
        await flaky!.down();
        run.start();
        const events = [await run.send(), await run.send(), await run.send()];
        const ids = events.map((e) => e.eventId).sort();
        // The steady receiver has everything while the other is still down.
        await steady!.waitFor((posts) => posts.length === 3);
        let pendingEntries: Array<Record<string, unknown>> = [];
        await waitFor('three pending entries', async () => {
          const pending = await api.call('GET', `/webhooks/${flakyId}/deliveries?status=pending`);
          pendingEntries = pending.body.deliveries as Array<Record<string, unknown>>;
          return pending.status === 200 && pendingEntries.length === 3;
        });
        expect(flaky!.posts).toEqual([]);
        expect(pendingEntries.map((d) => d.eventId).sort()).toEqual(ids);
        for (const entry of pendingEntries) {
          expect(entry).toMatchObject({ event: 'message', status: 'pending' });
          expect(entry.attempts).toBeGreaterThanOrEqual(1);
          expect(typeof entry.lastError).toBe('string');
          expect(entry.lastAttemptAt).toEqual(expect.any(Number));
          expect(Math.abs(Date.now() - Number(entry.lastAttemptAt))).toBeLessThan(10 * 60_000);
        }

        await flaky!.up();
        await flaky!.waitFor((posts) => posts.length === 3);
        await run.drained();
        expect(idsOf(flaky!.posts).sort()).toEqual(ids);
        expect(idsOf(steady!.posts).sort()).toEqual(ids);
        for (const post of flaky!.posts) expect(Number(post.headers['x-webhook-attempt'])).toBeGreaterThan(1);
        for (const post of steady!.posts) expect(post.headers['x-webhook-attempt']).toBe('1');

        await waitFor('the delivered entries', async () => {
          const answer = await api.call('GET', `/webhooks/${flakyId}/deliveries?status=delivered`);
          return (answer.body.deliveries as unknown[]).length === 3;
        });
        const flakyLog = (await api.call('GET', `/webhooks/${flakyId}/deliveries`)).body.deliveries as Array<Record<string, unknown>>;
        // Newest first: the events were queued in order.
        expect(flakyLog.map((d) => d.eventId)).toEqual(events.map((e) => e.eventId).reverse());
        for (const entry of flakyLog) {
          expect(entry.status).toBe('delivered');
          expect(entry.attempts).toBeGreaterThan(1);
        }
        expect((await api.call('GET', `/webhooks/${flakyId}/deliveries?status=pending`)).body.deliveries).toEqual([]);
        await waitFor('the steady entries', async () => {
          const answer = await api.call('GET', `/webhooks/${steadyId}/deliveries?limit=2`);
          return (answer.body.deliveries as unknown[]).length === 2;
        });
        const steadyLog = (await api.call('GET', `/webhooks/${steadyId}/deliveries?limit=2`)).body.deliveries as Array<
          Record<string, unknown>
        >;
        expect(steadyLog).toEqual(
          [events[2], events[1]].map((e) => ({
            eventId: e!.eventId,
            event: 'message',
            status: 'delivered',
            attempts: 1,
            lastAttemptAt: expect.any(Number),
          })),
        );
      } finally {
        await run.stop();
      }
    });
  });

  it('an event naming its webhook (a replay) goes to that webhook only, with the original X-Webhook-Id', async () => {
    const run = await newRun();
    await withReceivers(2, async ([chosen, other]) => {
      try {
        const chosenId = await run.register(chosen!);
        await run.register(other!);
        run.start();
        const original = await run.send();
        await chosen!.waitFor((posts) => posts.length === 1);
        await other!.waitFor((posts) => posts.length === 1);
        const replayed = { ...original, createdAt: Date.now(), webhookId: chosenId };
        await run.queues.sendWebhookEvent(replayed);
        await chosen!.waitFor((posts) => posts.length === 2);
        await run.drained();
        expect(idsOf(chosen!.posts)).toEqual([original.eventId, original.eventId]);
        expect(chosen!.posts[1]?.body).toEqual(webhookBody(original));
        expect(idsOf(other!.posts)).toEqual([original.eventId]);
      } finally {
        await run.stop();
      }
    });
  });

  it("a webhook registered while the worker's list is cached gets the next event at once, not after the list expires", async () => {
    // A list that would not expire during the test: only the fresh read can find the new webhook.
    const run = await newRun({}, 600_000);
    await withReceivers(1, async ([receiver]) => {
      try {
        run.start();
        const unselected = await run.send();
        await run.drained();
        await run.register(receiver!);
        const next = await run.send();
        await receiver!.waitFor((posts) => posts.length === 1, 10_000);
        await run.drained();
        expect(idsOf(receiver!.posts)).toEqual([next.eventId]);
        expect(receiver!.countFor(unselected.eventId)).toBe(0);
      } finally {
        await run.stop();
      }
    });
  });

  it('a deleted registration gets nothing more once the cached list expires; the others keep receiving', async () => {
    const run = await newRun({}, 1_000);
    await withReceivers(2, async ([removed, kept]) => {
      try {
        await run.register(removed!);
        await run.register(kept!);
        run.start();
        const before = await run.send();
        await removed!.waitFor((posts) => posts.length === 1);
        await run.unregister(removed!);
        // Within the cache's lifetime the deleted webhook may still be served; then never again.
        const sent = [before];
        await waitFor(
          'an event delivered to the kept webhook only',
          async () => {
            const event = await run.send();
            sent.push(event);
            await kept!.waitFor((posts) => posts.length === sent.length);
            // Every POST of the event is over once it left the queue.
            await run.drained();
            return removed!.countFor(event.eventId) === 0;
          },
          { timeoutMs: 15_000 },
        );
        const servedBefore = removed!.posts.length;
        const last = await run.send();
        await kept!.waitFor((posts) => posts.length === sent.length + 1);
        await run.drained();
        expect(removed!.posts).toHaveLength(servedBefore);
        expect(idsOf(kept!.posts)).toEqual([...sent, last].map((e) => e.eventId));
      } finally {
        await run.stop();
      }
    });
  });
});

describe('GET /webhooks/:webhookId/deliveries', () => {
  it('answers 404 for an unknown webhook and 400 for a bad status or limit', async () => {
    const unknown = await api.call('GET', '/webhooks/wh_doesnotexist/deliveries');
    expect(unknown).toMatchObject({ status: 404, body: { ok: false, error: 'Webhook not found' } });
    expect((await api.call('GET', '/webhooks/wh%20bad/deliveries')).status).toBe(404);
    const badStatus = await api.call('GET', '/webhooks/wh_doesnotexist/deliveries?status=lost');
    expect(badStatus).toMatchObject({ status: 400, body: { ok: false, error: 'status must be one of pending, failed, delivered' } });
    for (const limit of ['0', '101', 'x']) {
      const answer = await api.call('GET', `/webhooks/wh_doesnotexist/deliveries?limit=${limit}`);
      expect(answer).toMatchObject({ status: 400, body: { ok: false, error: 'limit must be an integer from 1 to 100' } });
    }
  });
});
