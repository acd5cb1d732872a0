import type { OpenAPIHono } from '@hono/zod-openapi';
import { featureRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { webhookDeliveryRoutes } from './deliveries.js';
import { webhookRegistrationRoutes } from './registrations.js';
import { webhookReplayRoutes } from './replay.js';

/** Webhooks, global (`/webhooks`) and scoped to an account: registrations, replay, the deliveries log. */
export function webhookRoutes(services: Services): OpenAPIHono<AppEnv> {
  const parts = [webhookRegistrationRoutes(services), webhookReplayRoutes(services), webhookDeliveryRoutes(services)];
  return featureRouter(parts);
}
