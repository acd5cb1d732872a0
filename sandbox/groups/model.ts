import { randomBytes, randomInt } from 'node:crypto';

/** A participant's rank, as `type` on `<participant>` (absent for a plain member). */
export type GroupRole = 'admin' | 'superadmin' | null;

/** A group as the network keeps it; members by phone number (each is an account of the network). */
export interface Group {
  /** The user part of the group JID (`<id>@g.us`): 18 digits like WhatsApp's current groups. */
  id: string;
  subject: string;
  /** Phone of whoever set the subject last, and when (Unix seconds). */
  subjectOwner: string;
  subjectTime: number;
  description?: { id: string; text: string; owner: string; time: number };
  creator: string;
  /** Unix seconds. */
  creation: number;
  /** Members in the order they joined. */
  participants: Map<string, GroupRole>;
  inviteCode: string;
}

const GROUP_SERVER = 'g.us';

export const groupJid = (id: string) => `${id}@${GROUP_SERVER}`;

/** The group id of a group JID (`120363...@g.us`, or the older `<creator>-<time>@g.us`); undefined for anything else. */
export function parseGroupJid(jid: string | undefined): string | undefined {
  return jid ? /^([0-9]{1,20}(?:-[0-9]{1,20})?)@g\.us$/.exec(jid)?.[1] : undefined;
}

export const newGroupId = () => `120363${String(randomInt(100_000, 999_999))}${String(randomInt(100_000, 999_999))}`;

/** WhatsApp's invite codes are 22 characters of URL-safe base64. */
export const newInviteCode = () => randomBytes(16).toString('base64url').slice(0, 22);

export const isAdmin = (group: Group, phone: string) => {
  const role = group.participants.get(phone);
  return role === 'admin' || role === 'superadmin';
};
