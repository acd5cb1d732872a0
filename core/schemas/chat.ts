import { z } from 'zod';

export const chatSchema = z.object({
  chatId: z.string(),
  name: z.string(),
  unreadCount: z.number().int(),
  lastMessageTime: z.number().int(),
});
export type Chat = z.infer<typeof chatSchema>;
