import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress } from '../../../core/net/address-policy.js';
import { ForbiddenTargetError, guardedLookup, type LookupAll } from '../../../core/net/webhook-target.js';
import { loadConfig } from '../../../core/config.js';
import { createQueues, resolveQueueUrl } from '../../../core/queues.js';
import { ensureResources } from '../../../core/resources.js';
import { webhookBody, webhookEventId, webhookEventSchema, type WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { tableOf } from '../../../core/store/table.js';
import { deleteWebhook, registerWebhook } from '../../../core/store/webhooks.js';
import { startWebhookDelivery } from '../../../connector/webhooks/delivery-worker.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

/**
 * The address policy at delivery time: the worker checks every stored URL again (a URL stored
 * before the policy, or a name re-pointed since registration) and connects only to addresses
 * it has checked. A refused target goes to the dead-letter queue at once, without a request.
 */
let stack: TestStack;
let seq = 0;
/** This machine's name when it resolves to a loopback or private address (it does in most containers). */
let privateHostName: string | undefined;

beforeAll(async () => {
  stack = await startTestStack();
  const name = hostname();
  const addresses = await lookup(name, { all: true }).catch(() => []);
  if (addresses.length > 0 && addresses.every((a) => classifyAddress(a.address).class === 'private')) privateHostName = name;
});
afterAll(async () => {
  await stack?.stop();
});

interface DeadLetter {
  event: WebhookEvent;
  attempts: number;
  webhookId: string;
  lastError: string;
}

/** Registers `urls`, runs a worker with the given policy on its own queues, sends one event. */
async function deliverOnce(urls: string[], allowPrivate: boolean) {
  seq += 1;
  const suffix = `tp${seq}-${Date.now()}`;
  const config = loadConfig({
    ...stack.env,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE: String(allowPrivate),
    WEBHOOK_QUEUE_NAME: `wh-${suffix}`,
    WEBHOOK_DLQ_NAME: `wh-${suffix}-dlq`,
    WEBHOOK_RETRY_BASE_MS: '500',
    WEBHOOK_MAX_ATTEMPTS: '3',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  await ensureResources(config, stack.clients, silentLogger);
  const table = tableOf(config, stack.clients);
  const webhookIds: string[] = [];
  for (const url of urls) webhookIds.push((await registerWebhook(table, url)).registration.webhookId);
  const queues = createQueues(config, stack.clients, silentLogger);
  const worker = startWebhookDelivery({ config, clients: stack.clients, logger: silentLogger, queues, registrationCacheMs: 0 });
  const messageId = `3EB0TP${seq}`;
  const accountId = `tp${seq}`;
  const event: WebhookEvent = {
    eventId: webhookEventId(accountId, messageId),
    accountId,
    event: 'message',
    body: {
      from: '15550002222@s.whatsapp.net',
      message: 'hello',
      messageId,
      timestamp: 1_767_000_000_000,
      chatId: '15550002222@s.whatsapp.net',
      fromMe: false,
      type: 'text',
    },
  };
  await queues.sendWebhookEvent(event);

  const dlqUrl = await resolveQueueUrl(stack.clients.sqs, config.WEBHOOK_DLQ_NAME);
  /** `count` DLQ entries (one per given-up webhook), with the attributes the worker gave them. */
  async function deadLetters(count: number, timeoutMs = 30_000): Promise<DeadLetter[]> {
    const found: DeadLetter[] = [];
    const deadline = Date.now() + timeoutMs;
    while (found.length < count && Date.now() < deadline) {
      const { Messages = [] } = await stack.clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 1, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }),
      );
      for (const message of Messages) {
        const attribute = (name: string) => message.MessageAttributes?.[name]?.StringValue ?? '';
        found.push({
          event: webhookEventSchema.parse(JSON.parse(message.Body ?? '{}')),
          attempts: Number(attribute('attempts')),
          webhookId: attribute('webhookId'),
          lastError: attribute('lastError'),
        });
      }
    }
    return found;
  }
  return {
    event,
    webhookIds,
    deadLetters,
    /** The first DLQ entry. */
    async deadLetter(timeoutMs = 30_000): Promise<DeadLetter | undefined> {
      return (await deadLetters(1, timeoutMs))[0];
    },
    async stop() {
      await worker.stop();
      for (const url of urls) await deleteWebhook(table, url);
    },
  };
}

describe('webhook delivery: target addresses', { timeout: 60_000 }, () => {
  it('a receiver on 127.0.0.1 with WEBHOOK_ALLOW_PRIVATE=false: dead-lettered on the first attempt, nothing POSTed', async () => {
    const receiver = new WebhookReceiver();
    await receiver.up();
    const run = await deliverOnce([receiver.url], false);
    try {
      const dead = await run.deadLetter();
      expect(dead).toMatchObject({ event: { ...run.event, webhookId: run.webhookIds[0] }, attempts: 1, webhookId: run.webhookIds[0] });
      expect(dead?.lastError).toBe(`${new URL(receiver.url).origin}: url targets a forbidden address (loopback address 127.0.0.1)`);
      expect(receiver.posts).toEqual([]);
    } finally {
      await run.stop();
      await receiver.close();
    }
  });

  it('the same receiver with WEBHOOK_ALLOW_PRIVATE=true: delivered', async () => {
    const receiver = new WebhookReceiver();
    await receiver.up();
    const run = await deliverOnce([receiver.url], true);
    try {
      await receiver.waitFor((posts) => posts.length === 1);
      expect(receiver.posts[0]?.body).toEqual(webhookBody(run.event));
    } finally {
      await run.stop();
      await receiver.close();
    }
  });

  it('localhost by name follows the same setting', async () => {
    const receiver = new WebhookReceiver();
    await receiver.up();
    const byName = receiver.url.replace('127.0.0.1', 'localhost');
    const refused = await deliverOnce([byName], false);
    try {
      expect((await refused.deadLetter())?.lastError).toMatch(/url targets a forbidden address \(loopback host localhost\)$/);
    } finally {
      await refused.stop();
    }
    const allowed = await deliverOnce([byName], true);
    try {
      await receiver.waitFor((posts) => posts.length === 1);
      expect(receiver.posts[0]?.headers['x-webhook-id']).toBe(allowed.event.eventId);
    } finally {
      await allowed.stop();
      await receiver.close();
    }
  });

  it('a name resolving to a private address is refused at connect time (the check runs on the resolved address)', async (context) => {
    if (!privateHostName) return context.skip();
    const receiver = new WebhookReceiver();
    await receiver.up();
    const run = await deliverOnce([receiver.url.replace('127.0.0.1', privateHostName)], false);
    try {
      const dead = await run.deadLetter();
      expect(dead?.attempts).toBe(1);
      expect(dead?.lastError).toMatch(new RegExp(`url targets a forbidden address \\(${privateHostName} resolves to .* address`));
      expect(receiver.posts).toEqual([]);
    } finally {
      await run.stop();
      await receiver.close();
    }
  });

  it('stored URLs the API would refuse (metadata, credentials) are dead-lettered without a request, even with private allowed', async () => {
    const receiver = new WebhookReceiver();
    await receiver.up();
    const withCredentials = receiver.url.replace('http://', 'http://user:pass@');
    const run = await deliverOnce(['http://169.254.169.254/latest/meta-data/', withCredentials], true);
    try {
      const dead = await run.deadLetters(2);
      expect(dead.map((d) => d.attempts)).toEqual([1, 1]);
      expect(dead.map((d) => d.webhookId).sort()).toEqual([...run.webhookIds].sort());
      const errors = dead.map((d) => d.lastError).join('\n');
      expect(errors).toContain('url targets a forbidden address (link-local (cloud metadata) address 169.254.169.254)');
      expect(errors).toContain('url targets a forbidden address (credentials in the URL)');
      expect(receiver.posts).toEqual([]);
    } finally {
      await run.stop();
      await receiver.close();
    }
  });

  it('a refused URL beside a good one: the good one gets the event once, the event is dead-lettered for the other', async () => {
    const receiver = new WebhookReceiver();
    await receiver.up();
    const run = await deliverOnce([receiver.url, 'http://[::ffff:169.254.169.254]/'], true);
    try {
      const dead = await run.deadLetter();
      expect(dead).toMatchObject({ attempts: 1, webhookId: run.webhookIds[1] });
      expect(receiver.countFor(run.event.eventId)).toBe(1);
      expect(await run.deadLetters(1, 2_000)).toEqual([]);
    } finally {
      await run.stop();
      await receiver.close();
    }
  });
});

describe('the delivery connection checks the address it connects to', () => {
  it('a name re-pointed at the metadata service between two connections: the second fails before connecting', async () => {
    const receiver = new WebhookReceiver();
    await receiver.up();
    const { port } = new URL(receiver.url);
    let calls = 0;
    const rebinding: LookupAll = (_host, _options, callback) => {
      calls += 1;
      callback(null, [{ address: calls === 1 ? '127.0.0.1' : '169.254.169.254', family: 4 }]);
    };
    const lookupGuard = guardedLookup({ allowPrivate: true }, rebinding);
    // Two pools: each request opens its own connection, as a later delivery would.
    const first = new Agent({ connect: { lookup: lookupGuard } });
    const second = new Agent({ connect: { lookup: lookupGuard } });
    try {
      const ok = await fetch(`http://rebind.test:${port}/hook`, { method: 'POST', body: '{}', dispatcher: first });
      expect(ok.status).toBe(200);
      const refused = await fetch(`http://rebind.test:${port}/hook`, { method: 'POST', body: '{}', dispatcher: second }).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.cause : error),
      );
      expect(refused).toBeInstanceOf(ForbiddenTargetError);
      expect(receiver.posts).toHaveLength(1);
    } finally {
      await Promise.all([first.close(), second.close()]);
      await receiver.close();
    }
  });
});
