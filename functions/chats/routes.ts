import type { OpenAPIHono } from '@hono/zod-openapi';
import { withKnownAccount } from '../http/known-account.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { chatActionRoutes } from './actions.js';
import { chatHistoryRoutes } from './chats.js';

/**
 * Chats: the stored chats, messages and media, and the actions that send no message (read,
 * presence). The actions answer an unknown account with 404 before the body is judged
 * (knownAccount); the reads look it up only when their answer is empty (chats.ts).
 */
export function chatRoutes(services: Services): OpenAPIHono<AppEnv> {
  return withKnownAccount(newRouter(), services.table, ['/accounts/:accountId/chats/:chatId/read', '/accounts/:accountId/presence'])
    .route('/', chatHistoryRoutes(services))
    .route('/', chatActionRoutes(services));
}
