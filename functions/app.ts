import type { OpenAPIHono } from '@hono/zod-openapi';
import { requestId } from 'hono/request-id';
import { newRequestId } from '../core/ids.js';
import { logger as rootLogger } from '../core/logger.js';
import { accountRoutes } from './accounts/routes.js';
import { chatRoutes } from './chats/routes.js';
import { groupRoutes } from './groups/routes.js';
import { adminKeysOf, authenticate } from './http/auth.js';
import { openApiDocument } from './http/openapi-document.js';
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

  // Every route but the public ones (functions/http/auth.ts) takes a key when API_KEY is set;
  // the document says so, and names the two ways to send one, only then.
  const keysOn = adminKeysOf(services.config.API_KEY).length > 0;
  if (keysOn) {
    app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
    app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', { type: 'apiKey', in: 'header', name: 'X-Api-Key' });
  }

  // Built on first request, once every route is registered (http/openapi-document.ts).
  let document: Record<string, unknown> | undefined;
  app.get('/openapi.json', (c) => c.json((document ??= openApiDocument(app, keysOn))));
  return app;
}
