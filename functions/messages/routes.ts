import type { OpenAPIHono } from '@hono/zod-openapi';
import { withKnownAccount } from '../http/known-account.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { messageKindRoutes } from './kinds.js';
import { mediaSendRoutes } from './media-sends.js';
import { sendRoutes } from './sends.js';
import { stickerSendRoutes } from './sticker.js';

/**
 * The send routes, `/accounts/{accountId}/message/…`: text, reply, react, delete, the other kinds,
 * edit and forward, media and stickers. Every one answers an unknown account with 404 before its
 * body is read or judged (knownAccount), so an upload for no account is never stored.
 */
export function messageRoutes(services: Services): OpenAPIHono<AppEnv> {
  return withKnownAccount(newRouter(), services.table, ['/accounts/:accountId/message/*'])
    .route('/', sendRoutes(services))
    .route('/', mediaSendRoutes(services))
    .route('/', messageKindRoutes(services))
    .route('/', stickerSendRoutes(services));
}
