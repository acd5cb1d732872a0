import { resolve } from 'node:path';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';

/**
 * The sandbox WhatsApp network inside `npm start -- --sandbox`: its state under
 * DATA_DIR/sandbox (links survive restarts), its descriptor in DATA_DIR/sandbox.json, and the
 * three WA_* settings that point the connector at it, with WA_VERSION_URL at its `sw.js`.
 */
export interface LocalSandbox {
  sandbox: RunningSandbox;
  /** WA_WS_URL, WA_ROOT_PUBLIC_KEY, WA_MEDIA_CA_FILE and WA_VERSION_URL, ready to merge into the stack's env. */
  env: Record<'WA_WS_URL' | 'WA_ROOT_PUBLIC_KEY' | 'WA_MEDIA_CA_FILE' | 'WA_VERSION_URL', string>;
}

/**
 * Fixed ports first so that the docs' `localhost:7701` works as printed; when one is taken, the
 * previous run's ports (when free) or any free ones: the start-up summary names the real URL.
 */
const DEFAULT_SANDBOX_PORTS = { chat: 7700, control: 7701, media: 7702 } as const;

/** The ports asked for in the configuration, the defaults for the others. */
export function sandboxPortsFrom(config: Pick<Config, 'SANDBOX_PORT' | 'SANDBOX_CONTROL_PORT' | 'SANDBOX_MEDIA_PORT'>) {
  return {
    chat: config.SANDBOX_PORT ?? DEFAULT_SANDBOX_PORTS.chat,
    control: config.SANDBOX_CONTROL_PORT ?? DEFAULT_SANDBOX_PORTS.control,
    media: config.SANDBOX_MEDIA_PORT ?? DEFAULT_SANDBOX_PORTS.media,
  };
}

export async function startLocalSandbox(
  dataDir: string,
  logger: Logger,
  ports = DEFAULT_SANDBOX_PORTS as { chat: number; control: number; media: number },
  /** WA_VERSION_URL as configured: kept when given, else the sandbox's `sw.js`. */
  versionUrl?: string,
): Promise<LocalSandbox> {
  const common = {
    dataDir: resolve(dataDir, 'sandbox'),
    descriptorFile: resolve(dataDir, 'sandbox.json'),
    logger,
  };
  let sandbox: RunningSandbox;
  try {
    sandbox = await startSandbox({ ...common, port: ports.chat, controlPort: ports.control, mediaPort: ports.media });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    logger.warn({ ports }, 'sandbox ports taken: using others (the start-up summary names them)');
    sandbox = await startSandbox({ ...common, reusePorts: true });
  }
  const { descriptor } = sandbox;
  return {
    sandbox,
    env: {
      WA_WS_URL: descriptor.wsUrl,
      WA_ROOT_PUBLIC_KEY: descriptor.rootPublicKey,
      WA_MEDIA_CA_FILE: descriptor.mediaCaFile,
      WA_VERSION_URL: versionUrl ?? descriptor.versionUrl,
    },
  };
}
