import { z } from 'zod';

/**
 * `pending`: written by the API, not yet taken. `sending`: the connector claimed it and is
 * handing it to WhatsApp. `sent` / `failed`: final. `unknown`: final, the connector stopped
 * between claiming and recording the outcome, so the message may or may not have gone out; it is
 * never sent again (at most once).
 */
const outboundStatusSchema = z.enum(['pending', 'sending', 'sent', 'failed', 'unknown']);
export type OutboundStatus = z.infer<typeof outboundStatusSchema>;

/** The state of one send in flight, written by the function and finished by the connector. */
export const outboundSchema = z.object({
  messageId: z.string(),
  commandId: z.string(),
  status: outboundStatusSchema,
  reason: z.string().optional(),
  /** Unix ms: a send refused because the account's sending was paused may be tried again then. */
  retryAt: z.number().int().optional(),
  sentAt: z.number().int().optional(),
  /**
   * Unix ms: the connector may claim the send only before it (the API answers by then). A record
   * written before deadlines existed reads as long past its deadline.
   */
  deadline: z.number().int().default(0),
  /**
   * A paced send (docs/sending.md#paced-sends): the earliest time the account's limits allowed
   * it when it was queued (Unix ms), and `async` when the client asked not to wait
   * (`Prefer: respond-async`): an Idempotency-Key replay answers it as queued again.
   */
  notBefore: z.number().int().optional(),
  async: z.boolean().optional(),
  /** Unix ms of the connector's claim. */
  claimedAt: z.number().int().optional(),
  /** Epoch seconds: DynamoDB TTL removes the record a day later. */
  expiresAt: z.number().int(),
});
export type Outbound = z.infer<typeof outboundSchema>;

const FINAL_STATUSES: ReadonlySet<OutboundStatus> = new Set(['sent', 'failed', 'unknown']);
export const isFinalStatus = (status: OutboundStatus) => FINAL_STATUSES.has(status);
