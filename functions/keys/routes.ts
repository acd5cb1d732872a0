import type { OpenAPIHono } from '@hono/zod-openapi';
import { featureRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { accountKeyRoutes } from './account-keys.js';
import { meRoutes } from './me.js';

/**
 * Access: what the caller's key reaches (`GET /me`), and the per-account keys an admin manages.
 * The key routes look the account up in their handlers.
 */
export function keyRoutes(services: Services): OpenAPIHono<AppEnv> {
  return featureRouter([accountKeyRoutes(services), meRoutes()]);
}
