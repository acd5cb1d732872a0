/**
 * The webhook receiver of the crash and scale benches: the suites' receiver
 * (test/support/webhook-receiver.ts) keeping, besides every POST, the inbound-message POSTs it
 * accepted (2xx) with the time it answered them. For an outage it goes down, either resetting
 * every connection (a crashed receiver) or answering 503, then comes back on the same URL.
 */
import { z } from 'zod';
import { type ReceivedPost, startWebhookReceiver } from '../../test/support/webhook-receiver.js';

export interface Delivery {
  /** X-Webhook-Id when sent (stable per event), else `<accountId>:<messageId>`. */
  key: string;
  messageId: string;
  /** performance.now() when the POST was answered. */
  at: number;
}

type OutageMode = 'refused' | '503';

export interface CrashReceiver {
  url: string;
  /** Inbound-message POSTs answered 200, in arrival order (duplicates included). */
  deliveries: Delivery[];
  /** POSTs answered 503 during an outage. */
  readonly rejectedPosts: number;
  goDown(mode: OutageMode): Promise<void>;
  comeUp(): Promise<void>;
  stop(): Promise<void>;
}

const messageEvent = z.object({
  messageId: z.string(),
  accountId: z.string(),
  fromMe: z.boolean().optional(),
  event: z.string().optional(),
});

/** What the gateway posts for an inbound message (other events and own messages are ignored). */
function inboundMessageOf(post: ReceivedPost): Omit<Delivery, 'at'> | undefined {
  const parsed = messageEvent.safeParse(post.body);
  if (!parsed.success) return undefined;
  const { messageId, accountId, fromMe, event } = parsed.data;
  if (fromMe === true || (event !== undefined && event !== 'message')) return undefined;
  const header = post.headers['x-webhook-id'];
  return { key: typeof header === 'string' ? header : `${accountId}:${messageId}`, messageId };
}

export async function startCrashReceiver(): Promise<CrashReceiver> {
  let answer503 = false;
  let rejectedPosts = 0;
  let down = false;
  const deliveries: Delivery[] = [];
  const receiver = await startWebhookReceiver((post) => {
    if (answer503) {
      rejectedPosts++;
      return 503;
    }
    const message = inboundMessageOf(post);
    if (message) deliveries.push({ ...message, at: performance.now() });
    return 200;
  });
  return {
    url: receiver.url,
    deliveries,
    get rejectedPosts() {
      return rejectedPosts;
    },
    async goDown(mode) {
      if (mode === '503') answer503 = true;
      else {
        down = true;
        await receiver.down();
      }
    },
    async comeUp() {
      answer503 = false;
      if (down) {
        await receiver.up();
        down = false;
      }
    },
    stop: () => receiver.close(),
  };
}

/** Distinct message ids accepted, and accepted POSTs beyond the first per event key. */
export function deliverySummary(deliveries: readonly Delivery[], among?: ReadonlySet<string>) {
  const relevant = among ? deliveries.filter((d) => among.has(d.messageId)) : deliveries;
  const keys = new Set(relevant.map((d) => d.key));
  return { messageIds: new Set(relevant.map((d) => d.messageId)), duplicates: relevant.length - keys.size };
}
