import { webhookSelects, type WebhookRegistration } from '../../core/schemas/webhook.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';
import type { DeliveryPair } from '../../core/store/webhook-deliveries.js';

/** The registrations an event goes to: those whose scope and filter select it; one naming its webhook (replay, redrive), that one only. */
export function targetsOf(event: WebhookEvent, registrations: WebhookRegistration[]): WebhookRegistration[] {
  return registrations.filter(
    (r) => (event.webhookId === undefined || r.webhookId === event.webhookId) && webhookSelects(r, event.accountId, event.event),
  );
}

/** Where a pair's entry is kept: by the event's first queueing time (its body's timestamp for events queued before that existed). */
export function pairOf(event: WebhookEvent, webhookId: string): DeliveryPair {
  const timestamp = event.body.timestamp;
  return { webhookId, eventId: event.eventId, createdAt: event.createdAt ?? (typeof timestamp === 'number' ? timestamp : 0) };
}
