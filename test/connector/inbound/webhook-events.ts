import type { Queues } from '../../../core/queues.js';
import type { WebhookEvent } from '../../../core/schemas/webhook-event.js';

/**
 * Drains the webhook queue until `count` events of `accountId` are seen or the deadline passes
 * (other accounts' events are handed back at once): a test that expects fewer events than
 * `count` asserts on what arrived by the deadline.
 */
export async function webhookEvents(queues: Queues, accountId: string, count: number, deadlineMs = 15_000): Promise<WebhookEvent[]> {
  const seen: WebhookEvent[] = [];
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline && seen.length < count) {
    const received = await queues.receiveWebhookEvents({ waitSeconds: 1, visibilityTimeoutSeconds: 30 });
    for (const r of received) {
      if (r.body.accountId === accountId) {
        seen.push(r.body);
        await queues.ackWebhookEvent(r.receiptHandle);
      } else {
        await queues.changeWebhookVisibility(r.receiptHandle, 0);
      }
    }
  }
  return seen;
}
