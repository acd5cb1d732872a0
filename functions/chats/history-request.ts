import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError } from '../../core/errors.js';
import { findChat } from '../../core/store/chats.js';
import { accountOf } from '../http/known-account.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonContent, jsonResponse } from '../http/responses.js';
import { accountIdParam, chatIdParam } from '../http/validation.js';
import { sendAndWait } from '../messages/send-wait.js';

const COUNT_ERROR = 'count must be an integer from 1 to 50';
const count = z.number({ error: COUNT_ERROR }).int({ error: COUNT_ERROR }).min(1, { error: COUNT_ERROR }).max(50, { error: COUNT_ERROR });
const body = z.object({ count }).openapi({ example: { count: 50 } });

const request = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/chats/{chatId}/history',
  summary: 'Ask the phone for older messages of a chat: they arrive as a history.sync event (on_demand)',
  description:
    "Asks the account's phone for `count` messages older than the chat's oldest stored one (docs/history.md). 202 once the request left; the messages are imported when the phone answers, and posted as one `history.sync` event with `syncType: on_demand`.",
  request: {
    params: z.object({ accountId: accountIdParam, chatId: chatIdParam }),
    body: { required: true, content: jsonContent(body) },
  },
  responses: {
    202: jsonResponse(z.object({ ok: z.literal(true), requested: z.number().int() }), 'Asked of the phone: `requested` messages'),
    400: errorResponse('Missing or invalid field'),
    404: errorResponse('Account not found / Chat not found'),
    500: errorResponse('internal_error: not connected or timed out'),
  },
});

/** The account is knownAccount's (chats/routes.ts): an unknown one is 404 before the body is judged. */
export function chatHistoryRequestRoutes(services: Services): OpenAPIHono<AppEnv> {
  return newRouter().openapi(request, async (c) => {
    const { chatId } = c.req.valid('param');
    const { count: requested } = c.req.valid('json');
    const account = accountOf(c);
    if (!(await findChat(services.table, account._id, chatId))) throw new NotFoundError('Chat not found');
    await sendAndWait(
      services,
      account,
      { type: 'request_history', payload: { to: chatId, count: requested } },
      { signal: c.req.raw.signal },
    );
    return c.json({ ok: true as const, requested }, 202);
  });
}
