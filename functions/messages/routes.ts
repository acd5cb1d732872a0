import type { OpenAPIHono } from '@hono/zod-openapi';
import { featureRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { messageKindRoutes } from './kinds.js';
import { mediaSendRoutes } from './media-sends.js';
import { sendRoutes } from './sends.js';
import { stickerSendRoutes } from './sticker.js';
import { queuedAnswer } from './async-sends.js';
import { outboxRoutes } from './outbox.js';

/**
 * The send routes, `/accounts/{accountId}/message/…`: text, reply, react, delete, the other kinds,
 * edit and forward, media and stickers. Every one answers an unknown account with 404 before its
 * body is read or judged (knownAccount), so an upload for no account is never stored. A paced
 * account's queued sends: `/accounts/{accountId}/outbox` (outbox.ts).
 */
export function messageRoutes(services: Services): OpenAPIHono<AppEnv> {
  const sends = [sendRoutes(services), mediaSendRoutes(services), messageKindRoutes(services), stickerSendRoutes(services)];
  const router = featureRouter(sends, { table: services.table, paths: ['/accounts/:accountId/message/*'], afterLookUp: queuedAnswer() });
  router.route(
    '/',
    featureRouter([outboxRoutes(services)], {
      table: services.table,
      paths: ['/accounts/:accountId/outbox', '/accounts/:accountId/outbox/*'],
    }),
  );
  return router;
}
