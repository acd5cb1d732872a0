import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { createClients, destroyClients } from '../core/aws.js';
import { loadConfig } from '../core/config.js';
import { logger as rootLogger } from '../core/logger.js';
import { ensureResources } from '../core/resources.js';
import { createApp } from './app.js';
import { warnWhenOpen } from './http/auth.js';
import { answerEarlyCleanly } from './messages/early-answer.js';
import type { AppDeps } from './http/services.js';

export interface ApiServer {
  url: string;
  port: number;
  /**
   * Stops accepting connections and waits for requests in flight to finish, at most `graceMs`
   * (default 5 s): then the connections still open are cut (a send waiting for its outcome
   * answers nothing rather than holding a stop up to its whole deadline).
   */
  close(graceMs?: number): Promise<void>;
}

const CLOSE_GRACE_MS = 5_000;

/** Serves the app on Node (port 0 picks a free port). */
export async function startApiServer(deps: AppDeps & { port: number; host: string }): Promise<ApiServer> {
  const app = createApp(deps);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve(
      // Draining and closing after an early answer is answerEarlyCleanly's, not the adapter's.
      { fetch: answerEarlyCleanly(app.fetch), port: deps.port, hostname: deps.host, autoCleanupIncoming: false },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  warnWhenOpen(deps.logger ?? rootLogger, deps.config.API_KEY, deps.host);
  return {
    url: `http://${deps.host}:${port}`,
    port,
    close: (graceMs = CLOSE_GRACE_MS) =>
      new Promise<void>((resolve, reject) => {
        const cut = setTimeout(() => {
          if ('closeAllConnections' in server) server.closeAllConnections();
        }, graceMs);
        server.close((error) => {
          clearTimeout(cut);
          if (error) reject(error);
          else resolve();
        });
        // Idle keep-alive sockets would hold close() open; busy ones finish their request.
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      }),
  };
}

/** `npx tsx functions/server.ts`: the API alone, against whatever AWS the environment names. */
async function main(): Promise<void> {
  const config = loadConfig();
  rootLogger.level = config.LOG_LEVEL;
  const clients = createClients(config);
  if (config.CREATE_RESOURCES) await ensureResources(config, clients);
  const api = await startApiServer({ config, clients, logger: rootLogger, port: config.PORT, host: config.HOST });
  rootLogger.info({ url: api.url }, 'API listening');
  const stop = async (signal: string) => {
    rootLogger.info({ signal }, 'stopping API');
    await api.close();
    destroyClients(clients);
    rootLogger.info('stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    rootLogger.fatal({ err: error }, 'API failed to start');
    process.exit(1);
  });
}
