import { z } from 'zod';

/** The body POSTed to webhook URLs (docs/webhooks.md). */
export const webhookPayloadSchema = z.object({
  from: z.string(),
  message: z.string(),
  messageId: z.string(),
  timestamp: z.number().int(),
  accountId: z.string(),
  chatId: z.string(),
  fromMe: z.boolean(),
  type: z.string(),
});
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;

/** One inbound message waiting for delivery; `eventId` is stable and sent as X-Webhook-Id. */
export const webhookEventSchema = z.object({
  eventId: z.string(),
  accountId: z.string(),
  payload: webhookPayloadSchema,
});
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

export function webhookEventId(accountId: string, messageId: string): string {
  return `${accountId}:${messageId}`;
}
