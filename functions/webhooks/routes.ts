import type { OpenAPIHono } from '@hono/zod-openapi';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { webhookDeliveryRoutes } from './deliveries.js';
import { webhookRegistrationRoutes } from './registrations.js';
import { webhookReplayRoutes } from './replay.js';

/** Webhooks, global (`/webhooks`) and scoped to an account: registrations, replay, the deliveries log. */
export function webhookRoutes(services: Services): OpenAPIHono<AppEnv> {
  return newRouter()
    .route('/', webhookRegistrationRoutes(services))
    .route('/', webhookReplayRoutes(services))
    .route('/', webhookDeliveryRoutes(services));
}
