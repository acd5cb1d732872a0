import type { Logger } from '../../core/logger.js';
import type { Queues, Received } from '../../core/queues.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';

/**
 * How long the delete of a handled event may wait for others to share its request. Nothing
 * waits for it (the event is done), and at a steady rate each delete was a request of its own,
 * one per message. A connector killed meanwhile only makes SQS hand those events out again after
 * their visibility timeout: their webhooks see them twice, under the same X-Webhook-Id.
 */
const ACK_LINGER_MS = 1_000;
/** Visibility of an event handed back or released: as good as 0 (see core/queues.ts). */
const RELEASE_SECONDS = 1;

/** What becomes of a received event's SQS message: deleted once handled, or made visible again. */
export interface EventDisposal {
  /** Deletes a handled event without holding its delivery's slot. */
  acknowledge(received: Received<WebhookEvent>): void;
  /** Makes events visible again at once (their circuit closed, or this worker stops). */
  release(handles: string[], why: string): Promise<void>;
  /** Settles once the deletes asked for so far were sent (stop() flushes the queues first). */
  acknowledged(): Promise<unknown>;
}

export function eventDisposal(queues: Pick<Queues, 'ackWebhookEvent' | 'changeWebhookVisibilities'>, log: Logger): EventDisposal {
  /** Deletes of handled events, waiting for company (stop() sends them). */
  const acks = new Set<Promise<void>>();
  return {
    acknowledge(received) {
      const ack = queues
        .ackWebhookEvent(received.receiptHandle, ACK_LINGER_MS)
        .catch((error: unknown) =>
          log.warn({ err: error, eventId: received.body.eventId }, 'deleting a handled webhook event failed; SQS hands it out again'),
        )
        .finally(() => acks.delete(ack));
      acks.add(ack);
    },
    async release(handles, why) {
      if (handles.length === 0) return;
      try {
        const refused = await queues.changeWebhookVisibilities(handles, RELEASE_SECONDS);
        log.info({ events: handles.length, refused: refused.length, why }, 'held webhook events released');
      } catch (error) {
        log.error({ err: error, why }, 'releasing held webhook events failed; they come back on their own schedule');
      }
    },
    acknowledged: () => Promise.allSettled([...acks]),
  };
}
