import { startTestApi } from '../../support/test-api.js';
import { startGateway, type GatewayOptions } from './gateway.js';
import type { Queues } from '../../../core/queues.js';
import type { WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { waitFor } from '../../support/wait.js';

export interface CollectedEvents {
  /** Every event taken off the queue so far, in the order received. */
  events: WebhookEvent[];
  /** The first event since index `from` that `match` selects. */
  next(what: string, from: number, match: (event: WebhookEvent) => boolean): Promise<WebhookEvent>;
  /** The first session.status event of the account since `from` with that status and reason. */
  status(accountId: string, status: string, reason: string, from: number): Promise<WebhookEvent>;
  stop(): Promise<void>;
}

/**
 * Takes every event off the webhook queue (for a gateway started without a delivery worker), so
 * a suite reads what the connector queued. Events of a standard queue come in any order: find
 * them by what they say, not by position.
 */
function collectWebhookEvents(queues: Queues): CollectedEvents {
  const events: WebhookEvent[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const message of await queues.receiveWebhookEvents({ waitSeconds: 1 })) {
        events.push(message.body);
        await queues.ackWebhookEvent(message.receiptHandle);
      }
    }
  })();
  const next = (what: string, from: number, match: (event: WebhookEvent) => boolean) => waitFor(what, () => events.slice(from).find(match));
  return {
    events,
    next,
    status: (accountId, status, reason, from) =>
      next(
        `${accountId}: session.status ${status} (${reason})`,
        from,
        (e) => e.accountId === accountId && e.event === 'session.status' && e.body.status === status && e.body.reason === reason,
      ),
    async stop() {
      running = false;
      await loop;
    },
  };
}

/**
 * A gateway whose events stay on the queue for the suite to read (no delivery worker), with the
 * API in front of it; `stop()` ends all three.
 */
export async function startEventGateway(options: Omit<GatewayOptions, 'webhookDelivery'> = {}) {
  const gw = await startGateway({ ...options, webhookDelivery: false });
  const api = await startTestApi(gw.stack);
  const collected = collectWebhookEvents(gw.queues);
  return {
    gw,
    api,
    collected,
    async stop() {
      await collected.stop();
      await api.close();
      await gw.stop();
    },
  };
}
