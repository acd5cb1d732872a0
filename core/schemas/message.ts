import { z } from 'zod';

const messageTypeSchema = z.enum(['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contact', 'reaction', 'unknown']);
export type MessageType = z.infer<typeof messageTypeSchema>;

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
  /** Set when the message has media that could not be stored (hasMedia true, no mediaId). */
  mediaError: z.string().optional(),
});
export type Message = z.infer<typeof messageSchema>;
