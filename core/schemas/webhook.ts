import { z } from 'zod';
import { webhookEventNameSchema } from './webhook-event.js';

/** A registration's filter: event names, or `*` for every event (later ones included). */
const webhookEventFilterSchema = z.array(z.union([webhookEventNameSchema, z.literal('*')]));

/**
 * A registered webhook (docs/webhooks.md). Identified by its URL and its scope: global (no
 * `accountId`) or one account's events. `secret` signs the POSTs and is never answered by the
 * API. Registrations stored before ids, scopes and filters existed read as global `message`
 * webhooks; the store gives them their id.
 */
export const webhookRegistrationSchema = z.object({
  webhookId: z.string(),
  url: z.string(),
  accountId: z.string().optional(),
  events: webhookEventFilterSchema.default(['message']),
  secret: z.string().optional(),
  createdAt: z.string(),
});
export type WebhookRegistration = z.infer<typeof webhookRegistrationSchema>;

/** Whether a registration selects an account's event. */
export function webhookSelects(registration: WebhookRegistration, accountId: string, event: string): boolean {
  if (registration.accountId !== undefined && registration.accountId !== accountId) return false;
  return registration.events.includes('*') || (registration.events as string[]).includes(event);
}

/** The only URLs a webhook may have: absolute http(s). */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}
