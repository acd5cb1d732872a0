import { z } from '@hono/zod-openapi';
import { NotFoundError } from '../../core/errors.js';
import { webhookEventNameSchema } from '../../core/schemas/webhook-event.js';
import type { WebhookRegistration } from '../../core/schemas/webhook.js';
import { findWebhook } from '../../core/store/webhooks.js';
import type { Table } from '../../core/store/table.js';

/** What the webhook routes share: the id parameter, the event filter, the lookup by id. */
export const WEBHOOK_NOT_FOUND = 'Webhook not found';

/** Ids are `wh_` and 22 base64url characters (core/store/webhooks.ts); anything else names no webhook. */
const WEBHOOK_ID_PATTERN = /^wh_[A-Za-z0-9_-]{22}$/;

export const webhookIdParam = z.string().openapi({ param: { name: 'webhookId', in: 'path' }, example: 'wh_3q2-7wEeRkGkYpXz0aB1cQ' });

const EVENTS_NOT_A_LIST = 'events must be a non-empty list of event names, or ["*"]';

/** Event names or `*` (every event, later ones included); an unknown name is refused by name. */
export const webhookEventsField = z
  .array(z.string({ error: EVENTS_NOT_A_LIST }), { error: EVENTS_NOT_A_LIST })
  .min(1, { error: EVENTS_NOT_A_LIST })
  .transform((names, ctx): WebhookRegistration['events'] => {
    const events: WebhookRegistration['events'] = [];
    for (const name of names) {
      const parsed = name === '*' ? ('*' as const) : webhookEventNameSchema.safeParse(name).data;
      if (parsed === undefined) {
        ctx.addIssue({ code: 'custom', message: `unknown event: ${name}` });
        return z.NEVER;
      }
      if (!events.includes(parsed)) events.push(parsed);
    }
    return events;
  })
  .openapi({
    type: 'array',
    items: { type: 'string', enum: ['*', ...webhookEventNameSchema.options] },
    description: 'Event names, or ["*"] for every event (later ones included). Default ["message"].',
    example: ['message', 'message.status'],
  });

/**
 * The webhook `webhookId` names, or NotFoundError. With `scope`, only one scoped to that account
 * is found (the account's own routes never reach another scope's webhooks).
 */
export async function webhookOf(table: Table, webhookId: string, scope: string | undefined): Promise<WebhookRegistration> {
  const registration = WEBHOOK_ID_PATTERN.test(webhookId) ? await findWebhook(table, webhookId) : undefined;
  if (!registration || (scope !== undefined && registration.accountId !== scope)) throw new NotFoundError(WEBHOOK_NOT_FOUND);
  return registration;
}
