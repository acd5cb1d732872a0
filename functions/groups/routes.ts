import type { OpenAPIHono } from '@hono/zod-openapi';
import { featureRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { contactBookRoutes } from './contact-book.js';
import { contactRoutes } from './contacts.js';
import { groupOperationRoutes } from './groups.js';

/**
 * Groups and contacts: questions and operations only WhatsApp can answer, run on the live socket
 * (group-wait.ts), and the contacts the sessions stored (contact-book.ts). Params and bodies are judged first (400), then the account is looked up (404):
 * no knownAccount here.
 */
export function groupRoutes(services: Services): OpenAPIHono<AppEnv> {
  const parts = [groupOperationRoutes(services), contactRoutes(services), contactBookRoutes(services)];
  return featureRouter(parts);
}
