import { pathToFileURL } from 'node:url';
import { createClients, destroyClients } from '../../core/aws.js';
import { ConfigError, loadConfig, usesDefaultAwsEndpoints, type Config } from '../../core/config.js';
import { logger } from '../../core/logger.js';
import { ensureResources } from '../../core/resources.js';
import type { Emulators } from './emulators.js';

/**
 * `npm start`: the whole gateway in one process tree. With no AWS_ENDPOINT_URL* set, the
 * embedded AWS (dynalite, s3rver, fauxqs) runs on loopback ports with its data under DATA_DIR;
 * otherwise the given endpoints (LocalStack, MinIO, AWS) are used. Then the API on PORT and the
 * connector. SIGINT/SIGTERM stop everything in reverse order; a second signal exits at once.
 */
export interface LocalStack {
  apiUrl: string;
  config: Config;
  /** Present when the embedded emulators run. */
  emulators?: Emulators;
  stop(): Promise<void>;
}

/**
 * A local stack's webhook receivers usually run on the same machine, so private and loopback
 * targets are allowed unless WEBHOOK_ALLOW_PRIVATE says otherwise.
 */
export function localDefaults(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, WEBHOOK_ALLOW_PRIVATE: env.WEBHOOK_ALLOW_PRIVATE || 'true' };
}

export async function startLocalStack(givenEnv: NodeJS.ProcessEnv = process.env): Promise<LocalStack> {
  const env = localDefaults(givenEnv);
  const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
  const stopAll = async () => {
    for (const { name, stop } of stops.reverse()) {
      await stop().catch((error: unknown) => logger.error({ err: error, part: name }, 'stop failed'));
    }
  };

  try {
    let config = loadConfig(env);
    logger.level = config.LOG_LEVEL;
    let emulators: Emulators | undefined;
    if (usesDefaultAwsEndpoints(config)) {
      silenceSqliteExperimentalWarning();
      // Imported here so that deployments with their own AWS never load the emulators.
      const { startEmulators } = await import('./emulators.js');
      emulators = await startEmulators({ dataDir: config.DATA_DIR });
      stops.push({ name: 'emulators', stop: () => emulators!.stop() });
      config = loadConfig({ ...env, ...emulators.env });
      logger.info({ dataDir: config.DATA_DIR, endpoints: emulators.endpoints }, 'embedded AWS started');
    }

    const clients = createClients(config);
    stops.push({ name: 'aws clients', stop: async () => destroyClients(clients) });
    // A local stack creates what it needs unless told not to (CREATE_RESOURCES=false).
    if (env.CREATE_RESOURCES !== 'false') await ensureResources(config, clients, logger);

    const { startApiServer } = await import('../../functions/server.js');
    const api = await startApiServer({ config, clients, logger, port: config.PORT, host: config.HOST });
    stops.push({ name: 'api', stop: () => api.close() });
    logger.info({ url: api.url }, 'API listening');

    // The one place the connector is started for the local stack.
    const { startConnector } = await import('../../connector/connector.js');
    const connector = await startConnector({ config, clients, logger });
    stops.push({ name: 'connector', stop: () => connector.stop() });

    return { apiUrl: api.url, config, ...(emulators ? { emulators } : {}), stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** fauxqs persists with node:sqlite, which Node 22 flags as experimental on every start. */
function silenceSqliteExperimentalWarning(): void {
  const emitWarning = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/SQLite is an experimental feature/.test(text)) return;
    (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
  }) as typeof process.emitWarning;
}

const DUPLICATE_SIGNAL_MS = 1000;

async function main(): Promise<void> {
  const stack = await startLocalStack();
  let firstSignalAt: number | undefined;
  const shutdown = (signal: NodeJS.Signals) => {
    // Ctrl-C reaches us from the terminal and again relayed by tsx: only a signal well after
    // the first means "stop waiting".
    if (firstSignalAt !== undefined && Date.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
    if (firstSignalAt !== undefined) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    firstSignalAt = Date.now();
    logger.info({ signal }, 'stopping');
    stack
      .stop()
      .then(() => {
        logger.info('stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'stop failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) logger.fatal(error.message);
    else logger.fatal({ err: error }, 'failed to start');
    process.exit(1);
  });
}
