import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError } from '../../core/errors.js';
import { listDeliveries } from '../../core/store/webhook-deliveries.js';
import { listWebhooks } from '../../core/store/webhooks.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonResponse } from '../http/responses.js';
import { pageQuery, type IssueParams } from '../http/validation.js';

const WEBHOOK_NOT_FOUND = 'Webhook not found';
const STATUSES = ['pending', 'failed', 'delivered'] as const;

/** An id no registration can have names none: 404, like an unknown one. */
const webhookIdParam = z
  .string()
  .refine((value) => /^[A-Za-z0-9_-]{1,64}$/.test(value), { error: WEBHOOK_NOT_FOUND, params: { status: 404 } satisfies IssueParams })
  .openapi({ param: { name: 'webhookId', in: 'path' }, example: 'wh_3q2-7wXyZ0aBcDeFgHiJkL' });

const query = z.object({
  status: z
    .enum(STATUSES, { error: `status must be one of ${STATUSES.join(', ')}` })
    .optional()
    .openapi({ param: { name: 'status', in: 'query' } }),
  limit: pageQuery.shape.limit,
});

const deliveryView = z.object({
  eventId: z.string().openapi({ description: 'The X-Webhook-Id sent' }),
  event: z.string(),
  status: z.enum(STATUSES),
  attempts: z.number().int(),
  lastError: z.string().optional(),
  lastAttemptAt: z.number().int().openapi({ description: 'Unix ms', example: 1767261600000 }),
});

const deliveries = createRoute({
  method: 'get',
  path: '/webhooks/{webhookId}/deliveries',
  summary: "A webhook's latest deliveries (kept 7 days), newest first",
  request: { params: z.object({ webhookId: webhookIdParam }), query },
  responses: {
    200: jsonResponse(
      z.object({ ok: z.literal(true), deliveries: z.array(deliveryView) }),
      'One entry per event sent to the webhook, with its latest attempt',
    ),
    400: errorResponse('Bad status or limit'),
    404: errorResponse(WEBHOOK_NOT_FOUND),
  },
});

export function webhookDeliveryRoutes(services: Services): OpenAPIHono<AppEnv> {
  return newRouter().openapi(deliveries, async (c) => {
    const { webhookId } = c.req.valid('param');
    const { status, limit } = c.req.valid('query');
    // Registrations are few and all in one partition: one Query finds the webhook.
    if (!(await listWebhooks(services.table)).some((w) => w.webhookId === webhookId)) throw new NotFoundError(WEBHOOK_NOT_FOUND);
    return c.json({ ok: true as const, deliveries: await listDeliveries(services.table, webhookId, { status, limit }) }, 200);
  });
}
