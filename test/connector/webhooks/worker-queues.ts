import { loadConfig, type Config } from '../../../core/config.js';
import { createQueues, type Queues } from '../../../core/queues.js';
import { ensureResources } from '../../../core/resources.js';
import { silentLogger, type TestStack } from '../../support/test-stack.js';

let seq = 0;

/**
 * A webhook worker's config on queues of its own (so cases never see each other's events), with
 * short retry, timeout and probe delays; `overrides` win. The queues are created.
 */
export async function workerQueues(stack: TestStack, overrides: Record<string, string> = {}): Promise<{ config: Config; queues: Queues }> {
  seq += 1;
  const suffix = `${seq}-${Date.now()}`;
  const config = loadConfig({
    ...stack.env,
    LOG_LEVEL: 'silent',
    WEBHOOK_QUEUE_NAME: `wh-${suffix}`,
    WEBHOOK_DLQ_NAME: `wh-${suffix}-dlq`,
    WEBHOOK_RETRY_BASE_MS: '500',
    WEBHOOK_MAX_ATTEMPTS: '3',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_PROBE_BASE_MS: '200',
    WEBHOOK_PROBE_MAX_MS: '1000',
    ...overrides,
  });
  await ensureResources(config, stack.clients, silentLogger);
  return { config, queues: createQueues(config, stack.clients, silentLogger) };
}
