import { z } from 'zod';
import { activePause, storedSendPauseSchema } from '../send-pause.js';

const accountStatusSchema = z.enum(['connecting', 'connected', 'reconnecting', 'logged_out', 'not_started']);
export type AccountStatus = z.infer<typeof accountStatusSchema>;

/**
 * Why an account's status changed, as the `session.status` event and `lastDisconnect` report it
 * (docs/webhooks.md has the table): `connected` for a login, the others for a connection that
 * went away or a session that ended.
 */
const statusReasonSchema = z.enum([
  'connected',
  'qr_timeout',
  'logged_out',
  'removed_by_whatsapp',
  'replaced',
  'connection_lost',
  'restart_required',
  'stopped',
  'client_too_old',
  'proxy_auth_failed',
  'proxy_forbidden',
  'proxy_failed',
]);
export type StatusReason = z.infer<typeof statusReasonSchema>;

/** The latest disconnect of an account: its reason and when (Unix ms). */
export const lastDisconnectSchema = z.object({ reason: statusReasonSchema, at: z.number().int() });

/** An account as stored (and as listed/got, which is the same set of fields). */
export const accountSchema = z.object({
  _id: z.string(),
  name: z.string().optional(),
  collectionName: z.string(),
  status: accountStatusSchema,
  currentStatus: accountStatusSchema,
  hasQR: z.boolean(),
  lastDisconnect: lastDisconnectSchema.optional(),
  /** WhatsApp's last refusal pause (core/send-pause.ts), kept after it ended for the doubling. */
  sendPause: storedSendPauseSchema.optional(),
  /** Unix ms the device was last linked (a QR or pairing code): the warm-up of paced sends counts from it. */
  linkedAt: z.number().int().optional(),
  createdAt: z.string(),
  lastUpdate: z.string(),
  /**
   * The settings as stored (core/schemas/settings.ts): read through `storedSettingsOf`, which
   * gives every absent field its default. Absent on accounts created before settings existed.
   */
  settings: z.record(z.string(), z.unknown()).optional(),
  /** Counts the writes of `settings`: a PATCH writes only over the version it read. */
  settingsVersion: z.number().int().optional(),
});
export type Account = z.infer<typeof accountSchema>;

/**
 * An account as the API lists and gets it (docs/api.md): the stored fields without `lastUpdate`,
 * in the order of the answer. Parsing a stored item with it validates the item and builds the
 * answer's object in one pass (a list of 1,000 accounts makes no second object per account).
 */
export const accountViewSchema = z.object({
  _id: z.string(),
  name: z.string().optional(),
  collectionName: z.string(),
  status: accountStatusSchema,
  createdAt: z.string(),
  currentStatus: accountStatusSchema,
  hasQR: z.boolean(),
  lastDisconnect: lastDisconnectSchema.optional(),
  /** Shown only while in force, as `{reason, until}`: sending resumes by itself, with no write. */
  sendPause: storedSendPauseSchema
    .optional()
    .transform((stored) => sendPauseView(stored))
    .optional(),
});
export type AccountView = z.infer<typeof accountViewSchema>;

/** The account answer's `sendPause`: `{reason, until}` while the stored pause is in force, else absent. */
export function sendPauseView(stored: z.infer<typeof storedSendPauseSchema> | undefined, now = Date.now()) {
  const pause = activePause(stored, now);
  return pause ? { reason: pause.reason, until: pause.until } : undefined;
}

/** The fields the connector changes together when a session moves. */
export interface AccountStatusChange {
  status: AccountStatus;
  hasQR?: boolean;
  /** Written with the status when the change is a disconnect. */
  lastDisconnect?: z.infer<typeof lastDisconnectSchema>;
}
