import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnector, type Connector } from '../../../connector/connector.js';
import { ConnectorMetrics } from '../../../connector/metrics/connector-metrics.js';
import { startEmfLines } from '../../../connector/metrics/emf.js';
import { BoundedCache } from '../../../core/bounded-cache.js';
import { createQueues } from '../../../core/queues.js';
import { waitFor } from '../../support/wait.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';

/** The connector's Prometheus endpoint (METRICS_PORT), on a stack with no accounts. */
describe('connector metrics', { timeout: 60_000 }, () => {
  let stack: TestStack;
  let connector: Connector;
  beforeAll(async () => {
    stack = await startTestStack({ overrides: { COMMAND_SHARDS: '3', METRICS_PORT: '0' } });
    connector = await startConnector({ config: stack.config, clients: stack.clients, logger: silentLogger, commandWaitSeconds: 1 });
  });
  afterAll(async () => {
    await connector?.stop();
    await stack?.stop();
  });

  it('serves the shards it holds, its accounts by status, the webhook backlog, RSS and the memory by kind at /metrics', async () => {
    expect(connector.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const response = await fetch(connector.metricsUrl!);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/^wa_shards_owned 3$/m);
    expect(text).toMatch(/^wa_accounts_owned 0$/m);
    expect(text).toMatch(/^wa_accounts_reconnecting 0$/m);
    expect(text).toMatch(/^wa_webhook_backlog 0$/m);
    expect(text).toMatch(/^wa_resident_memory_bytes [1-9]\d*$/m);
    const memory = (kind: string) => Number(new RegExp(`^wa_memory_bytes\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    expect(memory('heap_used')).toBeGreaterThan(0);
    expect(memory('heap_total')).toBeGreaterThanOrEqual(memory('heap_used'));
    expect(memory('external')).toBeGreaterThanOrEqual(memory('array_buffers'));
    expect(text).toContain('# TYPE wa_send_duration_seconds histogram');
    expect(text).toContain('# TYPE wa_idle_collection_seconds histogram');
    expect(text).toMatch(/^wa_heartbeat_losses_total 0$/m);
    expect((await fetch(connector.metricsUrl!.replace('/metrics', '/other'))).status).toBe(404);
  });

  it('shows every bounded cache: its entries, its bound and its instances, by name', async () => {
    // The connector runs in this process: a cache made here is one of its caches.
    const first = new BoundedCache<number, number>('metrics-test', 4);
    const second = new BoundedCache<number, number>('metrics-test', 4);
    for (let i = 0; i < 10; i++) first.set(i, i);
    second.set(1, 1);
    const text = await (await fetch(connector.metricsUrl!)).text();
    expect(text).toMatch(/^wa_cache_entries\{cache="metrics-test"\} 5$/m);
    expect(text).toMatch(/^wa_cache_max_entries\{cache="metrics-test"\} 8$/m);
    expect(text).toMatch(/^wa_cache_instances\{cache="metrics-test"\} 2$/m);
    first.clear();
    expect(await (await fetch(connector.metricsUrl!)).text()).toMatch(/^wa_cache_entries\{cache="metrics-test"\} 1$/m);
    // Still referenced here: the registry holds caches weakly, and a collected one would drop out.
    expect(second.size).toBe(1);
  });

  it('sends four metrics by default, the detail ones and the bounded caches summed up only when asked, and each cache as a line of its own only when asked', async () => {
    const cache = new BoundedCache<number, number>('emf-test', 3);
    for (let i = 0; i < 5; i++) cache.set(i, i);
    const queues = createQueues(stack.config, stack.clients, silentLogger);
    const metrics = new ConnectorMetrics({
      shardsOwned: () => 0,
      sessionStatuses: () => [],
      sqs: stack.clients.sqs,
      webhookQueueUrl: () => queues.webhookQueueUrl(),
    });
    const names = (line: Record<string, unknown>) =>
      (line._aws as { CloudWatchMetrics: { Metrics: { Name: string }[] }[] }).CloudWatchMetrics[0]!.Metrics.map((m) => m.Name);
    const plain: Record<string, unknown>[] = [];
    const stopPlain = startEmfLines(metrics, (line) => plain.push(JSON.parse(line) as Record<string, unknown>), { everyMs: 20 });
    try {
      const serviceLine = await waitFor('a service line', () => plain[0]);
      // Each name is a custom metric billed monthly: only what nothing free shows.
      expect(names(serviceLine)).toEqual(['AccountsConnected', 'AccountsReconnecting', 'InboundMessages', 'DecryptFailures']);
      expect(serviceLine).toMatchObject({
        Service: 'connector',
        AccountsConnected: 0,
        AccountsReconnecting: 0,
        InboundMessages: 0,
        DecryptFailures: 0,
      });
      expect(serviceLine.CacheEntries).toBeUndefined();
      expect(serviceLine.AccountsOwned).toBeUndefined();
    } finally {
      stopPlain();
    }

    const summed: Record<string, unknown>[] = [];
    const stopSummed = startEmfLines(metrics, (line) => summed.push(JSON.parse(line) as Record<string, unknown>), {
      everyMs: 20,
      detail: true,
    });
    try {
      const serviceLine = await waitFor('a service line', () => summed[0]);
      // emf-test holds 3 of its 3: the fullest cache is full.
      expect(serviceLine).toMatchObject({ Service: 'connector', AccountsOwned: 0, CacheFullestPercent: 100 });
      expect(serviceLine.CacheEntries).toBeGreaterThanOrEqual(3);
      expect(names(serviceLine)).toHaveLength(10);
      expect(names(serviceLine)).not.toContain('WebhookBacklog');
      expect(summed.every((l) => l.Cache === undefined)).toBe(true);
    } finally {
      stopSummed();
    }

    const lines: Record<string, unknown>[] = [];
    const stop = startEmfLines(metrics, (line) => lines.push(JSON.parse(line) as Record<string, unknown>), {
      everyMs: 20,
      detail: true,
      perCache: true,
    });
    try {
      const line = await waitFor('the cache line', () => lines.find((l) => l.Cache === 'emf-test'));
      expect(line).toMatchObject({ Service: 'connector', CacheEntries: 3, CacheMaxEntries: 3 });
      expect(cache.size).toBe(3);
      expect(line._aws).toMatchObject({
        CloudWatchMetrics: [
          { Namespace: 'WaGateway', Dimensions: [['Service', 'Cache']], Metrics: [{ Name: 'CacheEntries' }, { Name: 'CacheMaxEntries' }] },
        ],
      });
      expect(lines.find((l) => l.Cache === undefined)).toMatchObject({ Service: 'connector', AccountsOwned: 0 });
    } finally {
      stop();
    }
  });
});
