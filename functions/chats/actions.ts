import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { presenceStateSchema } from '../../core/schemas/command.js';
import { jidSchema } from '../../core/schemas/jid.js';
import { accountOf } from '../http/known-account.js';
import { newRouter } from '../http/router.js';
import { sendAndWait } from '../messages/send-wait.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonContent, messageResponse } from '../http/responses.js';
import { accountIdParam, chatIdParam, requiredString } from '../http/validation.js';

/**
 * Actions that send no message: read receipts for a chat, and presence (typing, recording,
 * paused; available, unavailable). They go the way of a send (functions/messages/send-wait.ts), so the
 * answer says whether the connector did it.
 */
const errors = {
  400: errorResponse('Missing or invalid field'),
  404: errorResponse('Account not found'),
  500: errorResponse('internal_error: not connected or timed out'),
};
const doneResponse = messageResponse('Done');

const STATE_ERROR = 'state must be one of typing, recording, paused, available, unavailable';
const PRESENCE_REQUIRED = 'chatId and state are required';
const presenceBody = z
  .object({ chatId: requiredString(PRESENCE_REQUIRED), state: requiredString(PRESENCE_REQUIRED) })
  .pipe(z.object({ chatId: jidSchema('chatId'), state: z.enum(presenceStateSchema.options, { error: STATE_ERROR }) }))
  .openapi({ example: { chatId: '15551234567@s.whatsapp.net', state: 'typing' } });

const read = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/chats/{chatId}/read',
  summary: 'Mark a chat read: read receipts for its unread messages, unreadCount 0',
  request: { params: z.object({ accountId: accountIdParam, chatId: chatIdParam }) },
  responses: { 200: doneResponse, ...errors },
});
const presence = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/presence',
  summary: 'Show typing, recording or paused in a chat, or go available or unavailable',
  description:
    "`available` and `unavailable` go to the account's presence subscribers under the push name set on the phone; until WhatsApp has given that name they fail (500).",
  request: {
    params: z.object({ accountId: accountIdParam }),
    body: { required: true, content: jsonContent(presenceBody) },
  },
  responses: { 200: doneResponse, ...errors },
});

/** The account is knownAccount's (chats/routes.ts): an unknown one is 404 before the body is judged. */
export function chatActionRoutes(services: Services): OpenAPIHono<AppEnv> {
  return newRouter()
    .openapi(read, async (c) => {
      const { chatId } = c.req.valid('param');
      await sendAndWait(services, accountOf(c), { type: 'mark_chat_read', payload: { to: chatId } }, { signal: c.req.raw.signal });
      return c.json({ ok: true as const, message: 'Chat marked read' }, 200);
    })
    .openapi(presence, async (c) => {
      const { chatId, state } = c.req.valid('json');
      await sendAndWait(services, accountOf(c), { type: 'send_presence', payload: { to: chatId, state } }, { signal: c.req.raw.signal });
      return c.json({ ok: true as const, message: 'Presence sent' }, 200);
    });
}
