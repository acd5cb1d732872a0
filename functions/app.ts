import type { OpenAPIHono } from '@hono/zod-openapi';
import { requestId } from 'hono/request-id';
import { newRequestId } from '../core/ids.js';
import { logger as rootLogger } from '../core/logger.js';
import { accountRoutes } from './accounts/routes.js';
import { chatRoutes } from './chats/routes.js';
import { groupRoutes } from './groups/routes.js';
import { authenticate } from './http/auth.js';
import { handleError } from './http/errors.js';
import { requestLog } from './http/request-log.js';
import { newRouter } from './http/router.js';
import { createServices, type AppDeps, type AppEnv } from './http/services.js';
import { keyRoutes } from './keys/routes.js';
import { messageRoutes } from './messages/routes.js';
import { systemRoutes } from './system/routes.js';
import { webhookRoutes } from './webhooks/routes.js';

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

  // One router per feature (functions/<feature>/routes.ts), each installing the account look-up
  // its routes need (http/known-account.ts). All at `/`: the routes carry their full paths (a
  // send's path is part of its Idempotency-Key fingerprint).
  app.route('/', systemRoutes(services));
  app.route('/', accountRoutes(services));
  app.route('/', messageRoutes(services));
  app.route('/', chatRoutes(services));
  app.route('/', webhookRoutes(services));
  app.route('/', keyRoutes(services));
  app.route('/', groupRoutes(services));

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
