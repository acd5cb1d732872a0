import type { OpenAPIHono } from '@hono/zod-openapi';
import { requestId } from 'hono/request-id';
import { newRequestId } from '../core/ids.js';
import { logger as rootLogger } from '../core/logger.js';
import { accountRoutes } from './accounts/accounts.js';
import { authenticate } from './http/auth.js';
import { chatRoutes } from './chats/chats.js';
import { connectionRoutes } from './accounts/connection.js';
import { docsRoutes } from './system/docs.js';
import { handleError } from './http/errors.js';
import { contactRoutes } from './groups/contacts.js';
import { groupRoutes } from './groups/groups.js';
import { healthRoutes } from './system/health.js';
import { keyRoutes } from './keys/routes.js';
import { knownAccount } from './http/known-account.js';
import { mediaSendRoutes } from './messages/media-sends.js';
import { messagingRoutes } from './messages/sends.js';
import { qrRoutes } from './accounts/qr.js';
import { requestLog } from './http/request-log.js';
import { pairingRoutes } from './accounts/pairing.js';
import { newRouter } from './http/router.js';
import { createServices, type AppDeps, type AppEnv } from './http/services.js';
import { webhookReplayRoutes } from './webhooks/replay.js';
import { webhookDeliveryRoutes } from './webhooks/deliveries.js';
import { webhookRoutes } from './webhooks/registrations.js';
import { messageKindRoutes } from './messages/kinds.js';
import { stickerSendRoutes } from './messages/sticker.js';
import { chatActionRoutes } from './chats/actions.js';

/**
 * The HTTP API of docs/api.md, the same app on Node (functions/server.ts) and on Lambda
 * (functions/lambda.ts). Validation failures are shaped by one defaultHook, every other error
 * by one onError.
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const logger = deps.logger ?? rootLogger;
  const services = createServices({ ...deps, logger });

  const app = newRouter();

  // The caller's X-Request-Id when well formed (word characters, '-' and '='; at most 64), else
  // a new one; the header is set before the handler builds its response, so Hono does not
  // rebuild a finished response around a body stream to add it.
  app.use(requestId({ limitLength: 64, generator: () => newRequestId() }));
  app.use(requestLog(logger));
  app.use(authenticate(services));
  app.onError(handleError);
  app.notFound((c) => c.json({ ok: false, error: 'Not found' }, 404));

  app.route('/', healthRoutes(services));
  app.route('/', accountRoutes(services));
  app.route('/', connectionRoutes(services));
  // Every send route answers an unknown account with 404 before its body is read or judged.
  app.use('/accounts/:accountId/message/*', knownAccount(services.table));
  app.route('/', messagingRoutes(services));
  app.route('/', mediaSendRoutes(services));
  app.route('/', chatRoutes(services));
  app.route('/', webhookRoutes(services));
  app.route('/', webhookReplayRoutes(services));
  app.route('/', webhookDeliveryRoutes(services));
  app.route('/', keyRoutes(services));
  app.route('/', qrRoutes(services));
  app.route('/', docsRoutes());
  app.route('/', pairingRoutes(services));
  app.route('/', messageKindRoutes(services));
  app.route('/', stickerSendRoutes(services));
  app.route('/', chatActionRoutes(services));
  app.route('/', groupRoutes(services));
  app.route('/', contactRoutes(services));

  // Every route but the public ones (functions/http/auth.ts) takes a key when API_KEY is set.
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', { type: 'apiKey', in: 'header', name: 'X-Api-Key' });

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'WhatsApp gateway', version: '2.0.0' },
    security: [{ bearer: [] }, { apiKey: [] }],
  });
  return app;
}
