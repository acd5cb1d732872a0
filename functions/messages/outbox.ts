import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import { MESSAGE_ID_PATTERN } from '../../core/jid.js';
import type { QueuedSend } from '../../core/schemas/command.js';
import { failPendingOutbound, findOutbound } from '../../core/store/outbound.js';
import { listQueuedSends, removeQueuedSend } from '../../core/store/send-queue.js';
import { accountOf } from '../http/known-account.js';
import { errorResponse, jsonResponse, messageResponse } from '../http/responses.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { accountIdParam } from '../http/validation.js';

/**
 * A paced account's queued sends (docs/sending.md#paced-sends): listed in send order, and
 * cancelled while still queued. A cancel is the API's way out of `pending` (pending -> failed,
 * conditional), the same write that fails a send at its deadline: the connector's claim and it
 * exclude each other, so a cancelled send never goes out, and one already claimed is 409.
 */

/** The reason a cancelled send's record is failed with. */
const CANCELLED = 'cancelled';

const KINDS: Record<QueuedSend['send']['type'], string> = {
  send_text: 'text',
  send_reply: 'reply',
  send_media: 'media',
  send_reaction: 'reaction',
  delete_message: 'delete',
  send_location: 'location',
  send_contact: 'contact',
  send_poll: 'poll',
  send_sticker: 'sticker',
  edit_message: 'edit',
  forward_message: 'forward',
};
/** The kind of message a queued send is: its route's (`image`, `video`… for media). */
const typeOf = ({ send }: QueuedSend): string => (send.type === 'send_media' ? send.payload.kind : KINDS[send.type]);

const queuedSendSchema = z
  .object({
    messageId: z.string(),
    to: z.string(),
    type: z.string().openapi({
      description: 'text, reply, image, video, audio, document, reaction, delete, location, contact, poll, sticker, edit, forward',
    }),
    status: z.literal('queued'),
    notBefore: z.number().int().openapi({ description: "Unix ms: the earliest time the account's limits allowed it when queued" }),
    createdAt: z.string(),
  })
  .openapi('QueuedSend');

const params = z.object({ accountId: accountIdParam });
const list = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/outbox',
  summary: "The account's queued sends, in send order (paced sends)",
  request: { params },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true), sends: z.array(queuedSendSchema) }), 'Queued sends'),
    404: errorResponse('Account not found'),
  },
});
const cancel = createRoute({
  method: 'delete',
  path: '/accounts/{accountId}/outbox/{messageId}',
  summary: 'Cancel a queued send',
  request: {
    params: params.extend({
      messageId: z.string().regex(MESSAGE_ID_PATTERN, { error: 'messageId must be a message id (letters and digits)' }),
    }),
  },
  responses: {
    200: messageResponse('Send cancelled'),
    404: errorResponse('Account not found, or Send not found'),
    409: errorResponse('Send already started'),
  },
});

export function outboxRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table } = services;
  return newRouter()
    .openapi(list, async (c) => {
      const sends = await listQueuedSends(table, accountOf(c)._id);
      return c.json(
        {
          ok: true as const,
          sends: sends.map((queued) => ({
            messageId: queued.messageId,
            to: queued.send.payload.to,
            type: typeOf(queued),
            status: 'queued' as const,
            notBefore: queued.notBefore,
            createdAt: queued.createdAt,
          })),
        },
        200,
      );
    })
    .openapi(cancel, async (c) => {
      const accountId = accountOf(c)._id;
      const { messageId } = c.req.valid('param');
      const outbound = await findOutbound(table, accountId, messageId);
      // Only paced sends have `notBefore`; a cancelled one is no longer there to cancel.
      if (!outbound || outbound.notBefore === undefined || (outbound.status === 'failed' && outbound.reason === CANCELLED)) {
        throw new NotFoundError('Send not found');
      }
      if (outbound.status !== 'pending' || !(await failPendingOutbound(table, accountId, messageId, CANCELLED))) {
        throw new ConflictError('Send already started');
      }
      const queued = (await listQueuedSends(table, accountId)).find((send) => send.messageId === messageId);
      if (queued) await removeQueuedSend(table, accountId, queued.ticket);
      c.get('log').info({ accountId, messageId }, 'queued send cancelled');
      return c.json({ ok: true as const, message: 'Send cancelled' }, 200);
    });
}
