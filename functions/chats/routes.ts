import type { OpenAPIHono } from '@hono/zod-openapi';
import { featureRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { chatActionRoutes } from './actions.js';
import { chatHistoryRoutes } from './chats.js';
import { chatHistoryRequestRoutes } from './history-request.js';

/**
 * Chats: the stored chats, messages and media, and the actions that send no message (read,
 * presence, a request for older history). The actions answer an unknown account with 404 before the body is judged
 * (knownAccount); the reads look it up only when their answer is empty (chats.ts).
 */
export function chatRoutes(services: Services): OpenAPIHono<AppEnv> {
  const parts = [chatHistoryRoutes(services), chatActionRoutes(services), chatHistoryRequestRoutes(services)];
  return featureRouter(parts, {
    table: services.table,
    paths: ['/accounts/:accountId/chats/:chatId/read', '/accounts/:accountId/presence', '/accounts/:accountId/chats/:chatId/history'],
  });
}
