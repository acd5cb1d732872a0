import { z } from 'zod';
import { messageStatusSchema } from './message.js';

/**
 * What an outbox item holds until its events are enqueued (core/store/event-outbox.ts): receipts
 * whose `message.status` event is rebuilt from the row they moved, and events built whole before
 * the row change they announce (a reaction, edit, revoke or vote with no write-ahead record).
 */
const outboxReceiptSchema = z.object({ messageId: z.string(), status: messageStatusSchema, at: z.number() });
export type OutboxReceipt = z.infer<typeof outboxReceiptSchema>;

export const outboxItemSchema = z.object({
  accountId: z.string(),
  id: z.string(),
  receipts: z.array(outboxReceiptSchema).optional(),
  /** The events as JSON text: their bodies are free-form, and text keeps them as they were built. */
  events: z.string().optional(),
  createdAt: z.number().int(),
  /** Epoch seconds: DynamoDB TTL removes an item no replay took (its account gone quiet). */
  expiresAt: z.number().int(),
});
export type OutboxItem = z.infer<typeof outboxItemSchema>;
