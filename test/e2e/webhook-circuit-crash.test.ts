import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageEventFor } from '../../core/message-event.js';
import { listOpenCircuits } from '../../core/store/webhook-circuits.js';
import { registerWebhook } from '../../core/store/webhooks.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { waitFor } from '../support/wait.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * The webhook circuit is shared by connector processes through DynamoDB: one opened by a
 * connector killed with -9 is open for the connectors that come after it, which park their
 * events instead of POSTing them, probe one at a time on the shared schedule, and all release
 * their parked events when a probe answers 2xx.
 */
describe('a webhook circuit across a connector crash and between connectors', { timeout: 240_000 }, () => {
  let gw: Gateway;
  const children: ChildConnector[] = [];
  const accountId = 'circuitcrash';
  let status = 500;
  const arrivals: Array<{ id: string; at: number }> = [];
  const answered = new Set<string>();
  const receiver = new WebhookReceiver((post) => {
    const id = String(post.headers['x-webhook-id']);
    arrivals.push({ id, at: Date.now() });
    if (status < 300) answered.add(id);
    return status;
  });
  // Probes every 2 s (no doubling); a retry a minute after a parked attempt, so that an event
  // delivered sooner than that was released, not retried.
  const PROBE_MS = 2_000;
  const env = () => ({
    ...gw.env,
    WEBHOOK_CIRCUIT_FAILURES: '3',
    WEBHOOK_PROBE_BASE_MS: String(PROBE_MS),
    WEBHOOK_PROBE_MAX_MS: String(PROBE_MS),
    WEBHOOK_RETRY_BASE_MS: '60000',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  const spawn = () => {
    const child = spawnConnector(env());
    children.push(child);
    return child;
  };
  const queueEvents = async (label: string, count: number) => {
    const ids: string[] = [];
    for (let n = 0; n < count; n += 1) {
      const peer = '15550002222@s.whatsapp.net';
      const message = {
        messageId: `3EB0${label}${n}`,
        from: peer,
        chatId: peer,
        timestamp: Date.now(),
        type: 'text',
        fromMe: false,
        text: `${label} ${n}`,
      } as const;
      const event = messageEventFor(accountId, message);
      await gw.queues.sendWebhookEvent(event);
      ids.push(event.eventId);
    }
    return ids;
  };

  beforeAll(async () => {
    await receiver.up();
    gw = await startGateway({ webhookDelivery: false });
    await registerWebhook(gw.table, receiver.url);
  });
  afterAll(async () => {
    for (const child of children) await child.kill();
    await gw?.stop();
    await receiver.close();
  });

  it('opened by a connector killed with -9: the next ones park, one probes at a time on schedule, and a 2xx releases every parked event', async () => {
    await queueEvents('BEFORE', 4);
    const first = spawn();
    await waitFor('the circuit to be open in DynamoDB', async () =>
      (await listOpenCircuits(gw.table)).some((circuit) => circuit.target === receiver.url),
    );
    await first.kill();

    const next = [spawn(), spawn()];
    // Queued once the new connectors receive: a long poll the killed process left open could
    // otherwise take an event with it (hidden for its visibility timeout, never parked).
    for (const child of next) await child.waitForLine('webhook delivery to start', (line) => line.msg === 'webhook delivery started');
    const since = Date.now();
    const after = await queueEvents('AFTER', 6);
    const probes = () => arrivals.filter((a) => a.at >= since);
    await waitFor('three probes by the new connectors', () => probes().length >= 3, { timeoutMs: 90_000 });
    // Known to be down, the receiver gets one POST per probe time, not every event of two
    // connectors that would each open their own circuit after three failures of their own.
    const gaps = probes()
      .slice(1)
      .map((a, i) => a.at - (probes()[i]?.at ?? 0));
    console.info(`POSTs while open after the crash: ${probes().length}, gaps ${gaps.join(', ')} ms`);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(PROBE_MS - 500);
    expect((await listOpenCircuits(gw.table)).find((circuit) => circuit.target === receiver.url)?.failedProbes).toBeGreaterThan(0);

    status = 200;
    const upAt = Date.now();
    await waitFor('every event queued after the crash to be delivered', () => after.every((id) => answered.has(id)), { timeoutMs: 45_000 });
    console.info(`every parked event delivered ${Date.now() - upAt} ms after the receiver answered again`);
    expect((await listOpenCircuits(gw.table)).some((circuit) => circuit.target === receiver.url)).toBe(false);
  });
});
