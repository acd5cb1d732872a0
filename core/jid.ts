/**
 * JIDs and ids that become DynamoDB keys or S3 paths. Everything the API accepts is checked
 * against these shapes before it reaches a key.
 */
const USER_JID = /^(\d{5,20})(?::\d+)?@s\.whatsapp\.net$/;
// Groups are `<creator>-<time>@g.us` (docs/api.md) or, for newer groups, digits only.
const GROUP_JID = /^(\d{5,25}(?:-\d{5,15})?)@g\.us$/;
// LID addressing: chats can be keyed by a hidden user id instead of the phone number.
const LID_JID = /^(\d{5,25})(?::\d+)?@lid$/;

export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9]{1,64}$/;
const COLLECTION_NAME_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const MESSAGE_ID_PATTERN = /^[A-Za-z0-9]{1,128}$/;

export function isUserJid(jid: string): boolean {
  return USER_JID.test(jid);
}

export function isGroupJid(jid: string): boolean {
  return GROUP_JID.test(jid);
}

/** Drops the device suffix (`123:4@s.whatsapp.net` -> `123@s.whatsapp.net`); returns undefined for non-JIDs. */
export function normalizeJid(jid: string): string | undefined {
  const trimmed = jid.trim().toLowerCase();
  const user = USER_JID.exec(trimmed);
  if (user) return `${user[1]}@s.whatsapp.net`;
  const lid = LID_JID.exec(trimmed);
  if (lid) return `${lid[1]}@lid`;
  if (GROUP_JID.test(trimmed)) return trimmed;
  return undefined;
}

export function isValidAccountId(id: string): boolean {
  return ACCOUNT_ID_PATTERN.test(id);
}

export function isValidCollectionName(name: string): boolean {
  return COLLECTION_NAME_PATTERN.test(name);
}

export function defaultCollectionName(accountId: string): string {
  return `auth_${accountId}`;
}
