import type { WebhookReceiver } from '../../support/webhook-receiver.js';

/**
 * Makes `receiver` hold unanswered the POSTs whose X-Webhook-Id `pick` chooses: the connector's
 * straight first attempt (connector/webhooks/straight-delivery.ts) stays out, the event still
 * held by its write-ahead record or outbox item, until the process dies. A connector killed then
 * dies at the worst moment for that event: stored, not yet delivered nor queued. The other POSTs
 * get 200. `held` lists the ids held; `answerAll` answers 200 to every POST from then on.
 */
export interface ReceiverHold {
  readonly held: Set<string>;
  answerAll(): void;
}

export function holdPosts(receiver: WebhookReceiver, pick: (eventId: string) => boolean): ReceiverHold {
  const held = new Set<string>();
  receiver.setAnswer((post) => {
    const id = String(post.headers['x-webhook-id']);
    if (!pick(id)) return 200;
    held.add(id);
    // Never answered: the POST is out until the connector that made it dies.
    return new Promise<number>(() => undefined);
  });
  return { held, answerAll: () => receiver.setAnswer(() => 200) };
}
