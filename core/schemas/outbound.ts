import { z } from 'zod';

export const outboundStatusSchema = z.enum(['pending', 'sent', 'failed']);
export type OutboundStatus = z.infer<typeof outboundStatusSchema>;

/** The state of one send in flight, written by the function and settled by the connector. */
export const outboundSchema = z.object({
  messageId: z.string(),
  commandId: z.string(),
  status: outboundStatusSchema,
  reason: z.string().optional(),
  sentAt: z.number().int().optional(),
  /** Epoch seconds: DynamoDB TTL removes the record a day later. */
  expiresAt: z.number().int(),
});
export type Outbound = z.infer<typeof outboundSchema>;
