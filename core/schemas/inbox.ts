import { z } from 'zod';

/**
 * One decrypted part of an inbound message stanza, kept until the message is stored and its
 * webhook event enqueued: what a replay needs to rebuild the message as Baileys would have.
 */
export const inboxRecordSchema = z.object({
  accountId: z.string(),
  /** The stanza's `id`. */
  messageId: z.string(),
  /** Position of the decrypted child in the stanza (a group message may carry two). */
  part: z.number().int(),
  /** pkmsg, msg or skmsg. */
  encType: z.string(),
  /** The `<message>` stanza's attributes: from, participant, t, notify, offline, addressing. */
  stanza: z.record(z.string(), z.string()),
  /** The decrypted bytes as the Signal layer returned them (still padded). */
  plaintext: z.custom<Uint8Array>((value) => value instanceof Uint8Array, 'plaintext must be binary'),
  receivedAt: z.number().int(),
  /** Epoch seconds: DynamoDB TTL removes a record nobody replayed. */
  expiresAt: z.number().int(),
});
export type InboxRecord = z.infer<typeof inboxRecordSchema>;
