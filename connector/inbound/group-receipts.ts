import type { MessageStatus } from '../../core/schemas/message.js';

/** One member's receipt for a message the account sent to a group (Baileys' message-receipt.update). */
export interface GroupReceipt {
  messageId: string;
  /** The member, as the receipt names them (phone-number or LID JID, no device). */
  userJid: string;
  kind: 'delivered' | 'read';
  /** Unix ms. */
  at: number;
}

/**
 * The members a message to a group went to, besides the account: each as every JID known for
 * them (phone number, LID), since a receipt may name either.
 */
export type GroupRecipients = readonly (readonly string[])[];

/**
 * The group rule (docs/api.md): a message to a group is `delivered` once every other member has
 * said so (a read receipt says so too), and `read` once every one has read it. Undefined while
 * some member has not; never decided for a group with no other member known.
 */
export function groupStatusOf(
  recipients: GroupRecipients,
  deliveredTo: ReadonlySet<string>,
  readBy: ReadonlySet<string>,
): Extract<MessageStatus, 'delivered' | 'read'> | undefined {
  if (recipients.length === 0) return undefined;
  const said = (ids: readonly string[], by: ReadonlySet<string>) => ids.some((id) => by.has(id));
  if (recipients.every((ids) => said(ids, readBy))) return 'read';
  if (recipients.every((ids) => said(ids, readBy) || said(ids, deliveredTo))) return 'delivered';
  return undefined;
}
