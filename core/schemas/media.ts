import { z } from 'zod';

/** Where a media file's bytes live; the message holds only `mediaId`. */
export const mediaSchema = z.object({
  mediaId: z.string(),
  messageId: z.string(),
  s3Key: z.string(),
  mimetype: z.string(),
  size: z.number().int().nonnegative(),
  fileName: z.string().optional(),
});
export type Media = z.infer<typeof mediaSchema>;
