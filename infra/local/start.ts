import { pathToFileURL } from 'node:url';
import { createClients, destroyClients } from '../../core/aws.js';
import { CONNECTOR_CLIENT_OPTIONS } from '../../connector/aws-transport.js';
import { ConfigError, loadConfig, usesDefaultAwsEndpoints, type Config } from '../../core/config.js';
import { logger } from '../../core/logger.js';
import { ensureResources } from '../../core/resources.js';
import type { Emulators } from './emulators.js';
import type { LocalSandbox } from './sandbox-network.js';
import { writeStackFile } from './stack-file.js';
import { printStartupSummary, startupSummary } from './summary.js';

/**
 * `npm start`: the whole gateway in one process tree. With no AWS_ENDPOINT_URL* set, the
 * embedded AWS (dynalite, s3rver, fauxqs) runs on loopback ports with its data under DATA_DIR;
 * otherwise the given endpoints (LocalStack, MinIO, AWS) are used. With `--sandbox` (or
 * WA_NETWORK=sandbox) the sandbox WhatsApp network runs too, and the connector is pointed at
 * it. Then the API on PORT and the connector. SIGINT/SIGTERM stop everything in reverse order; a second signal exits at once.
 */
export interface LocalStack {
  apiUrl: string;
  config: Config;
  /** Present when the embedded emulators run. */
  emulators?: Emulators;
  /** Present when the stack runs the sandbox network. */
  sandbox?: LocalSandbox;
  stop(): Promise<void>;
}

/**
 * A local stack's webhook receivers usually run on the same machine, so private and loopback
 * targets are allowed unless WEBHOOK_ALLOW_PRIVATE says otherwise.
 */
export function localDefaults(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, WEBHOOK_ALLOW_PRIVATE: env.WEBHOOK_ALLOW_PRIVATE || 'true' };
}

export interface LocalStackOptions {
  /** Run the sandbox network and point the connector at it (`npm start -- --sandbox`). */
  sandbox?: boolean;
  /** A stop asked for while starting: what has started is stopped again, in reverse order. */
  abortSignal?: AbortSignal;
}

export async function startLocalStack(givenEnv: NodeJS.ProcessEnv = process.env, options: LocalStackOptions = {}): Promise<LocalStack> {
  const env = localDefaults(givenEnv);
  const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
  const started = (name: string, stop: () => Promise<void>) => {
    stops.push({ name, stop });
    options.abortSignal?.throwIfAborted();
  };
  const stopAll = async () => {
    for (const { name, stop } of stops.reverse()) {
      await stop().catch((error: unknown) => logger.error({ err: error, part: name }, 'stop failed'));
    }
  };

  try {
    let config = loadConfig(env);
    logger.level = config.LOG_LEVEL;
    const runSandbox = options.sandbox || config.WA_NETWORK === 'sandbox';
    if (runSandbox && (config.WA_WS_URL || config.WA_ROOT_PUBLIC_KEY || config.WA_MEDIA_CA_FILE)) {
      throw new ConfigError('The sandbox network is started here: leave WA_WS_URL, WA_ROOT_PUBLIC_KEY and WA_MEDIA_CA_FILE unset');
    }
    let emulators: Emulators | undefined;
    if (usesDefaultAwsEndpoints(config)) {
      silenceSqliteExperimentalWarning();
      // Imported here so that deployments with their own AWS never load the emulators.
      const { startEmulators } = await import('./emulators.js');
      emulators = await startEmulators({ dataDir: config.DATA_DIR });
      started('emulators', () => emulators!.stop());
      config = loadConfig({ ...env, ...emulators.env });
      logger.info({ dataDir: config.DATA_DIR, endpoints: emulators.endpoints }, 'embedded AWS started');
    }

    let sandbox: LocalSandbox | undefined;
    if (runSandbox) {
      const { sandboxPortsFrom, startLocalSandbox } = await import('./sandbox-network.js');
      const sandboxLogger = logger.child({ component: 'sandbox' });
      // The sandbox reports only trouble unless asked (as `npm run sandbox` does).
      sandboxLogger.level = config.SANDBOX_LOG_LEVEL;
      sandbox = await startLocalSandbox(config.DATA_DIR, sandboxLogger, sandboxPortsFrom(config), config.WA_VERSION_URL);
      started('sandbox', () => sandbox!.sandbox.stop());
      config = { ...config, ...sandbox.env };
      logger.info({ controlUrl: sandbox.sandbox.descriptor.controlUrl, wsUrl: sandbox.env.WA_WS_URL }, 'sandbox network started');
    }

    const clients = createClients(config, CONNECTOR_CLIENT_OPTIONS);
    started('aws clients', async () => destroyClients(clients));
    // A local stack creates what it needs unless told not to (CREATE_RESOURCES=false).
    if (env.CREATE_RESOURCES !== 'false') await ensureResources(config, clients, logger);
    if (emulators) {
      // The emulators expire nothing: the stack applies DynamoDB TTL and the bucket's lifecycle itself.
      const { startRetentionSweep } = await import('./retention-sweep.js');
      const sweep = startRetentionSweep({ config, clients, logger });
      started('retention sweep', () => sweep.stop());
    }

    const { startApiServer } = await import('../../functions/server.js');
    const api = await startApiServer({ config, clients, logger, port: config.PORT, host: config.HOST });
    started('api', () => api.close());
    logger.info({ url: api.url }, 'API listening');

    if (config.CONNECTORS > 1) {
      // Scale-out locally: each connector in a process of its own, sharing the shards.
      const { startConnectorProcesses } = await import('./connector-processes.js');
      const processes = startConnectorProcesses(config.CONNECTORS, { ...env, ...emulators?.env, ...sandbox?.env }, logger);
      started('connectors', () => processes.stop());
    } else {
      // The one place the in-process connector is started for the local stack.
      const { startConnector } = await import('../../connector/connector.js');
      const connector = await startConnector({ config, clients, logger, printTerminalQr: terminalQrPrinter(!sandbox) });
      started('connector', () => connector.stop());
    }

    const sandboxControlUrl = sandbox?.sandbox.descriptor.controlUrl;
    await writeStackFile(config.DATA_DIR, { apiUrl: api.url, ...(sandboxControlUrl ? { sandboxControlUrl } : {}) });
    printStartupSummary(
      startupSummary({ apiUrl: api.url, dataDir: config.DATA_DIR, sandboxControlUrl, authOn: Boolean(env.API_KEY) }),
      logger,
    );

    return { apiUrl: api.url, config, ...(emulators ? { emulators } : {}), ...(sandbox ? { sandbox } : {}), stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The QR drawing is for a person with a phone camera: on a terminal, and only for real WhatsApp
 * (a sandbox phone scans the text, `npm run sandbox:link`). The structured `qr` line is always logged.
 */
export function terminalQrPrinter(realWhatsApp: boolean, out: { isTTY?: boolean; write(text: string): unknown } = process.stdout) {
  return (drawing: string): void => {
    if (realWhatsApp && out.isTTY) out.write(drawing);
  };
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
  // The handlers are in place before anything starts, so that Ctrl-C during start-up stops what
  // has started as cleanly as a later one (the sandbox and emulators flush their data).
  const starting = new AbortController();
  let stack: LocalStack | undefined;
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
    if (!stack) {
      starting.abort();
      return;
    }
    stopAndExit(stack);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  try {
    stack = await startLocalStack(process.env, { sandbox: process.argv.slice(2).includes('--sandbox'), abortSignal: starting.signal });
  } catch (error) {
    if (!starting.signal.aborted) throw error;
    logger.info('stopped');
    process.exit(0);
  }
  // A signal after the last step but before the stack was handed back.
  if (starting.signal.aborted) stopAndExit(stack);
}

function stopAndExit(stack: LocalStack): void {
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
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) logger.fatal(error.message);
    else logger.fatal({ err: error }, 'failed to start');
    process.exit(1);
  });
}
