import { z } from 'zod';
import { sendPauseReasonSchema } from '../send-pause.js';

/**
 * Every event a webhook can subscribe to (docs/webhooks.md). `["*"]` in a registration selects
 * all of them, later ones included.
 */
const WEBHOOK_EVENT_NAMES = [
  'message',
  'message.status',
  'message.reaction',
  'message.revoked',
  'message.edited',
  'message.poll_vote',
  'session.status',
  'qr',
  'call',
  'account.limit',
  'history.sync',
] as const;
export const webhookEventNameSchema = z.enum(WEBHOOK_EVENT_NAMES);
type WebhookEventName = z.infer<typeof webhookEventNameSchema>;

/** The spec's body of an inbound message (the `message` event), before the added fields. */
const webhookPayloadSchema = z.object({
  from: z.string(),
  message: z.string(),
  messageId: z.string(),
  timestamp: z.number().int(),
  accountId: z.string(),
  chatId: z.string(),
  fromMe: z.boolean(),
  type: z.string(),
});

/** `message`: the spec's fields plus those the API extensions add (absent when unknown). */
const messageEventBodySchema = webhookPayloadSchema.extend({
  hasMedia: z.boolean().optional(),
  mediaId: z.string().optional(),
  caption: z.string().optional(),
  quotedMessageId: z.string().optional(),
  participant: z.string().optional(),
  fromPn: z.string().optional(),
  fromLid: z.string().optional(),
});

const deliveryStatusSchema = z.enum(['queued', 'sent', 'delivered', 'read', 'played', 'failed']);

/**
 * The body of each event besides `event` and `accountId`, which every body carries and which
 * delivery adds. Timestamps are Unix milliseconds, like the spec's message timestamp.
 */
const webhookEventBodySchemas = {
  message: messageEventBodySchema.omit({ accountId: true }),
  'message.status': z.object({
    messageId: z.string(),
    chatId: z.string(),
    status: deliveryStatusSchema,
    timestamp: z.number().int(),
    /** Why a queued send failed before it reached WhatsApp (docs/sending.md#paced-sends). */
    error: z.string().optional(),
  }),
  'message.reaction': z.object({
    messageId: z.string(),
    chatId: z.string(),
    from: z.string(),
    emoji: z.string(),
    timestamp: z.number().int(),
  }),
  'message.revoked': z.object({ messageId: z.string(), chatId: z.string(), from: z.string(), timestamp: z.number().int() }),
  'message.edited': z.object({
    messageId: z.string(),
    chatId: z.string(),
    from: z.string(),
    text: z.string(),
    timestamp: z.number().int(),
  }),
  'message.poll_vote': z.object({
    messageId: z.string(),
    chatId: z.string(),
    from: z.string(),
    selected: z.array(z.string()),
    timestamp: z.number().int(),
  }),
  'session.status': z.object({
    status: z.string(),
    previousStatus: z.string(),
    reason: z.string(),
    timestamp: z.number().int(),
  }),
  qr: z.object({ qr: z.string(), expiresAt: z.number().int(), timestamp: z.number().int() }),
  call: z.object({
    callId: z.string(),
    from: z.string(),
    isVideo: z.boolean(),
    status: z.enum(['offer', 'rejected', 'missed']),
    timestamp: z.number().int(),
  }),
  /** The account's sending paused after WhatsApp refused a send (core/send-pause.ts); `until` in Unix ms. */
  'account.limit': z.object({ reason: sendPauseReasonSchema, until: z.number().int(), timestamp: z.number().int() }),
  /** One imported chunk of the phone's history (docs/history.md): counts, never the messages. */
  'history.sync': z.object({
    syncType: z.enum(['bootstrap', 'recent', 'full', 'on_demand']),
    progress: z.number().int().min(0).max(100),
    chats: z.number().int(),
    messages: z.number().int(),
    timestamp: z.number().int(),
  }),
} satisfies Record<WebhookEventName, z.ZodType>;

/**
 * One event waiting for delivery, as queued. `eventId` is stable (the same on every retry and
 * replay) and is sent as X-Webhook-Id. `body` holds the event's fields besides `event` and
 * `accountId`. `webhookId` set: a replay, for that webhook only.
 *
 * Events queued before there were several kinds carry `payload` (the spec's message body) and
 * no `event`: they read as `message` events.
 */
export const webhookEventSchema = z.preprocess(
  (raw) => {
    if (raw && typeof raw === 'object' && !('event' in raw) && 'payload' in raw) {
      const { payload, ...rest } = raw as { payload: Record<string, unknown> };
      const { accountId: _accountId, ...body } = payload;
      return { ...rest, event: 'message', body };
    }
    return raw;
  },
  z.object({
    eventId: z.string(),
    accountId: z.string(),
    event: webhookEventNameSchema,
    body: z.record(z.string(), z.unknown()),
    /** Unix ms when the event was first queued. */
    createdAt: z.number().int().optional(),
    webhookId: z.string().optional(),
    /**
     * Attempts made before the event was queued (straight delivery, docs/webhooks.md): its first
     * receive then reads the deliveries log like a retry, and counts from there. A connector
     * from before straight delivery drops the field and takes the event for a first attempt.
     */
    attempted: z.number().int().positive().optional(),
  }),
);
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

export function webhookEventId(accountId: string, messageId: string): string {
  return `${accountId}:${messageId}`;
}

/** The JSON POSTed for an event: `event` and `accountId` first, then the event's fields. */
export function webhookBody(event: WebhookEvent): Record<string, unknown> {
  const body = webhookEventBodySchemas[event.event].parse(event.body) as Record<string, unknown>;
  return event.event === 'message'
    ? { event: event.event, ...body, accountId: event.accountId }
    : { event: event.event, accountId: event.accountId, ...body };
}
