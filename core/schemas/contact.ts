import { z } from 'zod';

/**
 * A person the account knows (docs/api.md, Contacts): by their phone-number JID or, when
 * WhatsApp hides the number, their LID. `name` is the name saved in the phone's address book,
 * `pushName` the one they gave themselves; `phone` is digits only.
 */
export const contactSchema = z.object({
  jid: z.string(),
  phone: z.string().optional(),
  lid: z.string().optional(),
  name: z.string().optional(),
  pushName: z.string().optional(),
});
export type Contact = z.infer<typeof contactSchema>;

/** The name a contact is shown and sorted by: the saved name, else the push name, else `+<phone>`. */
export function shownName(contact: Contact): string {
  return contact.name ?? contact.pushName ?? (contact.phone ? `+${contact.phone}` : (contact.jid.split('@')[0] ?? contact.jid));
}
