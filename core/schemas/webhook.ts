import { z } from 'zod';

export const webhookRegistrationSchema = z.object({
  url: z.string(),
  createdAt: z.string(),
});
export type WebhookRegistration = z.infer<typeof webhookRegistrationSchema>;

/** The only URLs a webhook may have: absolute http(s). */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}
