import { z } from 'zod';

const messageTypeSchema = z.enum([
  'text',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'location',
  'contact',
  'poll',
  'reaction',
  'unknown',
]);
export type MessageType = z.infer<typeof messageTypeSchema>;

/**
 * Where a message the account sent stands (docs/api.md): `pending` until WhatsApp acked it,
 * then `sent`, `delivered`, `read`, `played` (voice notes), or `failed` when WhatsApp refused it.
 */
export const messageStatusSchema = z.enum(['pending', 'sent', 'delivered', 'read', 'played', 'failed']);
export type MessageStatus = z.infer<typeof messageStatusSchema>;
/** One voter's current choice in a poll (an empty `selected` takes the vote back). */
const pollVoteSchema = z.object({ from: z.string(), selected: z.array(z.string()), timestamp: z.number().int() });

const reactionSchema = z.object({ from: z.string(), emoji: z.string(), timestamp: z.number().int() });

/** A stored message; timestamps are Unix milliseconds. */
export const messageSchema = z.object({
  messageId: z.string(),
  from: z.string(),
  chatId: z.string(),
  timestamp: z.number().int(),
  type: messageTypeSchema,
  fromMe: z.boolean(),
  /** Group messages: who wrote it (the same as `from`), so a webhook consumer needs no JID parsing. */
  participant: z.string().optional(),
  text: z.string().optional(),
  hasMedia: z.boolean().optional(),
  mediaId: z.string().optional(),
  caption: z.string().optional(),
  mimetype: z.string().optional(),
  fileName: z.string().optional(),
  seconds: z.number().optional(),
  ptt: z.boolean().optional(),
  fileLength: z.number().optional(),
  quotedMessageId: z.string().optional(),
  reactions: z.array(reactionSchema).optional(),
  revoked: z.boolean().optional(),
  /** The sender's phone-number and LID JIDs, both set when WhatsApp gave both (inbound only). */
  fromPn: z.string().optional(),
  fromLid: z.string().optional(),
  /** Messages the account sent: where the message stands, and since when (Unix ms). */
  status: messageStatusSchema.optional(),
  statusAt: z.number().int().optional(),
  /** Location: coordinates, and the place's name and address when given. */
  latitude: z.number().optional(),
  longitude: z.number().optional(),
  name: z.string().optional(),
  address: z.string().optional(),
  /** Contact: one vCard per contact card. */
  vcards: z.array(z.string()).optional(),
  /** Poll: its question is `text`; the options, how many may be chosen (0: any), the votes. */
  pollOptions: z.array(z.string()).optional(),
  selectableCount: z.number().int().optional(),
  pollVotes: z.array(pollVoteSchema).optional(),
  /** Set when the message has media that could not be stored (hasMedia true, no mediaId). */
  mediaError: z.string().optional(),
  /** Imported from the phone's history (docs/history.md), not received live. */
  historical: z.boolean().optional(),
});
export type Message = z.infer<typeof messageSchema>;
