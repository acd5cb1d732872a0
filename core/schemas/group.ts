import { z } from 'zod';
import { isGroupJid, isUserJid, normalizeJid } from '../jid.js';

/**
 * Groups: the operations the API asks the connector for (one `group` command), the answers the
 * connector records for it, and the group shapes of docs/api.md.
 */

export const GROUP_SUBJECT_MAX = 100;
export const GROUP_DESCRIPTION_MAX = 2048;
/** WhatsApp's group size limit; more JIDs in one request cannot all be members. */
const GROUP_PARTICIPANTS_MAX = 1024;

export const GROUP_ACTIONS = ['add', 'remove', 'promote', 'demote'] as const;

/** A group JID (`<digits>-<digits>@g.us` or `<digits>@g.us`; bare digits get `@g.us`). */
export const groupJidSchema = (field: string) => {
  const error = `${field} must be a group JID (<digits>@g.us or <digits>-<digits>@g.us)`;
  return z.string({ error }).transform((value, ctx) => {
    const jid = normalizeJid(/^[\d-]+$/.test(value.trim()) ? `${value.trim()}@g.us` : value);
    if (!jid || !isGroupJid(jid)) {
      ctx.addIssue({ code: 'custom', message: error });
      return z.NEVER;
    }
    return jid;
  });
};

/** A person to add, remove, promote or demote: a user JID (`<digits>@s.whatsapp.net`) or a LID. */
const participantJid = z.string().transform((value, ctx) => {
  const jid = normalizeJid(value);
  if (!jid || isGroupJid(jid)) {
    ctx.addIssue({ code: 'custom', message: 'participants must be user JIDs (<digits>@s.whatsapp.net)' });
    return z.NEVER;
  }
  return jid;
});

export const participantsSchema = z
  .array(participantJid, { error: 'participants must be a non-empty array of JIDs' })
  .min(1, { error: 'participants must be a non-empty array of JIDs' })
  .max(GROUP_PARTICIPANTS_MAX, { error: `participants must have at most ${GROUP_PARTICIPANTS_MAX} JIDs` });

export const groupOperationSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('list') }),
  z.object({ op: z.literal('create'), subject: z.string(), participants: z.array(z.string()) }),
  z.object({ op: z.literal('metadata'), groupId: z.string() }),
  z.object({ op: z.literal('participants'), groupId: z.string(), action: z.enum(GROUP_ACTIONS), participants: z.array(z.string()) }),
  z.object({ op: z.literal('update'), groupId: z.string(), subject: z.string().optional(), description: z.string().optional() }),
  z.object({ op: z.literal('invite'), groupId: z.string() }),
  z.object({ op: z.literal('leave'), groupId: z.string() }),
]);
export type GroupOperation = z.infer<typeof groupOperationSchema>;

const adminSchema = z.enum(['admin', 'superadmin']).nullable();

export const groupSummarySchema = z.object({
  groupId: z.string(),
  subject: z.string(),
  size: z.number().int(),
  owner: z.string().optional(),
  /** ISO time the group was created. */
  createdAt: z.string().optional(),
});

export const groupDetailSchema = z.object({
  groupId: z.string(),
  subject: z.string(),
  description: z.string().optional(),
  owner: z.string().optional(),
  participants: z.array(z.object({ jid: z.string(), admin: adminSchema })),
});
export type GroupDetail = z.infer<typeof groupDetailSchema>;

export const participantResultSchema = z.object({
  jid: z.string(),
  /** WhatsApp's code for this JID: 200 done; 403 not allowed (privacy), 404 not on WhatsApp or not in the group, 409 already in it. */
  status: z.number().int(),
});

/** What the connector records as the answer of each operation (the API answers it as is). */
const groupResultSchema = z.union([
  z.object({ groups: z.array(groupSummarySchema) }),
  z.object({ group: groupDetailSchema }),
  z.object({ results: z.array(participantResultSchema) }),
  z.object({ code: z.string(), url: z.string() }),
  z.object({}),
]);
export type GroupResult = z.infer<typeof groupResultSchema>;

/**
 * One group operation or socket query (socket-query.ts) in flight, written by the function and
 * finished by the connector (core/store/group-requests.ts). `pending`: not taken. `running`: a connector took it.
 * `done`: `answer` holds WhatsApp's answer as the API gives it. `refused`: WhatsApp said no (`refusal`). `failed`: it
 * could not be done, `reason` says why.
 */
const groupRequestStatusSchema = z.enum(['pending', 'running', 'done', 'refused', 'failed']);
type GroupRequestStatus = z.infer<typeof groupRequestStatusSchema>;

const GROUP_REFUSALS = ['not_found', 'not_member', 'not_admin', 'bad_request'] as const;
export type GroupRefusal = (typeof GROUP_REFUSALS)[number];

export const groupRequestSchema = z.object({
  commandId: z.string(),
  status: groupRequestStatusSchema,
  /** Unix ms: the connector may take the request only before it (the API answers by then). */
  deadline: z.number().int(),
  answer: z.unknown().optional(),
  refusal: z.enum(GROUP_REFUSALS).optional(),
  reason: z.string().optional(),
  /** Epoch seconds: DynamoDB TTL removes the record. */
  expiresAt: z.number().int(),
});
export type GroupRequest = z.infer<typeof groupRequestSchema>;

const FINAL: ReadonlySet<GroupRequestStatus> = new Set(['done', 'refused', 'failed']);
export const isFinalGroupRequestStatus = (status: GroupRequestStatus) => FINAL.has(status);

/** A participant as the API names it: by phone number when WhatsApp gave one (LID-addressed groups). */
export function apiJid(id: string, phoneNumber?: string): string {
  const pn = phoneNumber ? normalizeJid(phoneNumber) : undefined;
  if (pn && isUserJid(pn)) return pn;
  return normalizeJid(id) ?? id;
}
