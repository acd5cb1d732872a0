import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnector, type Connector } from '../../connector/connector.js';
import { silentLogger, startTestStack, type TestStack } from '../support/test-stack.js';

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

  it('serves the shards it holds, its accounts by status, the webhook backlog and RSS at /metrics', async () => {
    expect(connector.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const response = await fetch(connector.metricsUrl!);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/^wa_shards_owned 3$/m);
    expect(text).toMatch(/^wa_accounts_owned 0$/m);
    expect(text).toMatch(/^wa_accounts_reconnecting 0$/m);
    expect(text).toMatch(/^wa_webhook_backlog 0$/m);
    expect(text).toMatch(/^wa_resident_memory_bytes [1-9]\d*$/m);
    expect(text).toContain('# TYPE wa_send_duration_seconds histogram');
    expect((await fetch(connector.metricsUrl!.replace('/metrics', '/other'))).status).toBe(404);
  });
});
