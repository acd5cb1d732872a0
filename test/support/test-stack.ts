import { createClients, destroyClients, type AwsClients } from '../../core/aws.js';
import { loadConfig, type Config } from '../../core/config.js';
import { ensureResources } from '../../core/resources.js';
import { startEmulators } from '../../infra/local/emulators.js';
import { pino } from 'pino';

export interface TestStack {
  config: Config;
  clients: AwsClients;
  /** The emulators' env (endpoints, region, dummy credentials), for child processes. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Emulators on free ports (in a temp dir unless `dataDir` is given), SDK clients pointing at
 * them, and the table, bucket and queues created. `overrides` go into the config (e.g.
 * SEND_TIMEOUT_MS). Nothing touches process.env. Call `stop()` in afterAll.
 */
export async function startTestStack(
  options: { dataDir?: string; overrides?: Record<string, string> } = {},
): Promise<TestStack> {
  const emulators = await startEmulators(options.dataDir ? { dataDir: options.dataDir } : {});
  const config = loadConfig({ LOG_LEVEL: 'silent', ...emulators.env, ...options.overrides });
  const clients = createClients(config);
  try {
    await ensureResources(config, clients, pino({ level: 'silent' }));
  } catch (error) {
    destroyClients(clients);
    await emulators.stop();
    throw error;
  }
  return {
    config,
    clients,
    env: emulators.env,
    async stop() {
      destroyClients(clients);
      await emulators.stop();
    },
  };
}

export const silentLogger = pino({ level: 'silent' });
