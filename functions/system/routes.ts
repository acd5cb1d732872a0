import type { OpenAPIHono } from '@hono/zod-openapi';
import { featureRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { dashboardRoutes } from './dashboard.js';
import { docsRoutes } from './docs.js';
import { healthRoutes } from './health.js';

/** The API about itself: `/ping`, the `/docs` page and the `/dashboard` console (`/openapi.json` is the app's own, app.ts). */
export function systemRoutes(services: Services): OpenAPIHono<AppEnv> {
  const parts = [healthRoutes(services), docsRoutes(), dashboardRoutes()];
  return featureRouter(parts);
}
