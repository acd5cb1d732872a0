import { createClients, destroyClients } from '../core/aws.js';
import { ConfigError, loadConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { ensureResources } from '../core/resources.js';
import { startConnector } from './connector.js';

/**
 * The connector process: config from the environment, AWS clients, (resources when
 * CREATE_RESOURCES=true), then the connector. SIGINT/SIGTERM: stop taking commands, finish the
 * ones in flight, close sockets, release leases, exit.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const clients = createClients(config);
  if (config.CREATE_RESOURCES) await ensureResources(config, clients, logger);
  const connector = await startConnector({ config, clients, logger });

  let signals = 0;
  const shutdown = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    logger.info({ signal }, 'shutting down');
    connector
      .stop()
      .then(() => {
        destroyClients(clients);
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) logger.fatal(error.message);
  else logger.fatal({ err: error }, 'connector failed to start');
  process.exit(1);
});
