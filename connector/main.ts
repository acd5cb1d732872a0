import { type AwsClients, createClients, destroyClients } from '../core/aws.js';
import { CONNECTOR_CLIENT_OPTIONS } from './aws-transport.js';
import { ConfigError, loadConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { ensureResources } from '../core/resources.js';
import { type Connector, startConnector } from './connector.js';
import { ASYNC_CONTEXT_FRAME_FLAG } from './node-flags.js';

/**
 * The connector process: config from the environment, AWS clients, (resources when
 * CREATE_RESOURCES=true), then the connector. SIGINT/SIGTERM: stop taking commands, finish the
 * ones in flight, close sockets, release leases, exit.
 */
async function main(): Promise<void> {
  if (!process.execArgv.includes(ASYNC_CONTEXT_FRAME_FLAG) && Number(process.versions.node.split('.')[0]) < 24) {
    logger.warn(`start node with ${ASYNC_CONTEXT_FRAME_FLAG}: without it CPU per message grows with the number of accounts`);
  }
  const config = loadConfig();
  const clients = createClients(config, CONNECTOR_CLIENT_OPTIONS);
  let connector: Connector | undefined;
  let signals = 0;
  const shutdown = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    logger.info({ signal }, 'shutting down');
    // A signal during start-up is acted on once the connector is up, so that leases it took are released.
    if (connector) stopAndExit(connector, clients);
  };
  // In place before anything starts: a task stopped while starting must still release what it took.
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  if (config.CREATE_RESOURCES) await ensureResources(config, clients, logger);
  connector = await startConnector({ config, clients, logger });
  if (signals > 0) stopAndExit(connector, clients);
}

function stopAndExit(connector: Connector, clients: AwsClients): void {
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
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) logger.fatal(error.message);
  else logger.fatal({ err: error }, 'connector failed to start');
  process.exit(1);
});
