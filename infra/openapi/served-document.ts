import { pino } from 'pino';
import { createClients, destroyClients } from '../../core/aws.js';
import { loadConfig } from '../../core/config.js';
import { createApp } from '../../functions/app.js';

/**
 * The text of the OpenAPI document the app serves at `GET /openapi.json` with the settings of
 * `env` (e.g. `{API_KEY: ...}` for the document with its keys, 401s and 403s): asked of the app
 * in process, as a client generator or linter reads it. Building it makes no AWS request.
 */
export async function servedDocument(env: Record<string, string>): Promise<string> {
  const config = loadConfig(env);
  const clients = createClients(config);
  try {
    const app = createApp({ config, clients, logger: pino({ level: 'silent' }) });
    const response = await app.request('/openapi.json');
    if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`);
    return await response.text();
  } finally {
    destroyClients(clients);
  }
}
