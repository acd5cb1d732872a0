import { z } from 'zod';

const accountStatusSchema = z.enum(['connecting', 'connected', 'reconnecting', 'logged_out', 'not_started']);
export type AccountStatus = z.infer<typeof accountStatusSchema>;

/** An account as stored (and as listed/got, which is the same set of fields). */
export const accountSchema = z.object({
  _id: z.string(),
  name: z.string().optional(),
  collectionName: z.string(),
  status: accountStatusSchema,
  currentStatus: accountStatusSchema,
  hasQR: z.boolean(),
  createdAt: z.string(),
  lastUpdate: z.string(),
});
export type Account = z.infer<typeof accountSchema>;

/** The fields the connector changes together when a session moves. */
export interface AccountStatusChange {
  status: AccountStatus;
  hasQR?: boolean;
}
