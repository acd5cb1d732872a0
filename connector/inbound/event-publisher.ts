import type { Queues } from '../../core/queues.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';

/**
 * Where the connector hands an event it stored: straight delivery (connector/webhooks/
 * straight-delivery.ts) in a connector that delivers webhooks. `publish` resolves once the
 * event no longer needs what holds it (its write-ahead record, the row's mark, its outbox item:
 * docs/guarantees.md): it was served, its retry is queued, or no registration selects it.
 */
export interface EventPublisher {
  publish(event: WebhookEvent): Promise<void>;
}

/** Every event to the webhook queue, for a delivery worker to make its first attempt (a process delivering no webhooks itself). */
export function queuedPublisher(queues: Pick<Queues, 'sendWebhookEvent'>): EventPublisher {
  return { publish: (event) => queues.sendWebhookEvent(event) };
}
