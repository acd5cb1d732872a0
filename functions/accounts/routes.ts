import type { OpenAPIHono } from '@hono/zod-openapi';
import { featureRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { accountRecordRoutes } from './accounts.js';
import { connectionRoutes } from './connection.js';
import { pairingRoutes } from './pairing.js';
import { qrRoutes } from './qr.js';
import { settingsRoutes } from './settings.js';

/**
 * Accounts: create, list, get and delete; the connection (status, connect, disconnect); linking
 * by QR or by pairing code; settings. The pairing code's and the settings' unknown account is 404
 * before the body is judged (knownAccount); the other routes look the account up in their handlers.
 */
export function accountRoutes(services: Services): OpenAPIHono<AppEnv> {
  const parts = [
    accountRecordRoutes(services),
    connectionRoutes(services),
    qrRoutes(services),
    pairingRoutes(services),
    settingsRoutes(services),
  ];
  return featureRouter(parts, { table: services.table, paths: ['/accounts/:accountId/pairing-code', '/accounts/:accountId/settings'] });
}
