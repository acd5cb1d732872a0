import type { Contact as BaileysContact } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
import { isUserJid, normalizeJid } from '../../core/jid.js';
import type { Logger } from '../../core/logger.js';
import { shownName, type Contact } from '../../core/schemas/contact.js';
import { chatWriterOf } from '../../core/store/chat-writer.js';
import { recordContact, type ContactChange } from '../../core/store/contacts.js';
import type { Table } from '../../core/store/table.js';

/**
 * Contacts recently written per account: Baileys reports a sender's push name with every message
 * it carries (Socket/chats.js, upsertMessage), so without them each message would cost a write.
 */
const RECENT_CONTACTS = 200;

export interface ContactBookDeps {
  table: Table;
  accountId: string;
  logger: Logger;
}

/**
 * The account's contacts as WhatsApp reports them to the session (docs/api.md, Contacts):
 * `contacts.upsert` (the phone's address book, history) and `contacts.update` (a push name with a
 * message, a renamed contact). A contact is written only when something of it changed, and when
 * the name it is shown by changes, its one-to-one chat (if stored) is renamed: saved name, else
 * push name, else the number.
 */
export class ContactBook {
  private readonly recent = new BoundedCache<string, Contact>('contacts', RECENT_CONTACTS);

  constructor(private readonly deps: ContactBookDeps) {}

  /** The name saved in the phone's address book for `jid`, when this session knows it. */
  savedNameOf(jid: string): string | undefined {
    return this.recent.get(jid)?.name;
  }

  /** Handles a `contacts.upsert` or `contacts.update` batch; never throws (a failure is logged). */
  async learn(reported: readonly Partial<BaileysContact>[]): Promise<void> {
    for (const contact of reported) {
      const change = changeOf(contact);
      if (!change) continue;
      try {
        await this.record(change);
      } catch (error) {
        this.deps.logger.warn({ err: error, accountId: this.deps.accountId }, 'contact not stored');
      }
    }
  }

  private async record(change: ContactChange): Promise<void> {
    const known = this.recent.get(change.jid);
    if (known && Object.entries(change).every(([field, value]) => known[field as keyof Contact] === value)) return;
    const { table, accountId } = this.deps;
    const before = known ?? { jid: change.jid };
    const stored = await recordContact(table, accountId, change);
    this.recent.set(change.jid, stored);
    // A chat stored under the contact's JID takes the name it is shown by; an absent one is left
    // absent. Through the chat writer, which every other chat change goes through: a rename
    // written beside it would be undone by a put of the chat as that writer last knew it.
    if (!known || shownName(before) !== shownName(stored))
      await chatWriterOf(table).change(accountId, change.jid, { name: shownName(stored) });
  }
}

/** What a reported contact says, keyed by its phone-number JID (else its LID); undefined: not a person. */
function changeOf(contact: Partial<BaileysContact>): ContactChange | undefined {
  const id = contact.id ? normalizeJid(contact.id) : undefined;
  if (!id || !(isUserJid(id) || id.endsWith('@lid'))) return undefined;
  const pn = isUserJid(id) ? id : contact.phoneNumber ? normalizeJid(contact.phoneNumber) : undefined;
  const lid = id.endsWith('@lid') ? id : contact.lid ? normalizeJid(contact.lid) : undefined;
  const jid = pn && isUserJid(pn) ? pn : id;
  const change: ContactChange = { jid };
  if (pn && isUserJid(pn)) change.phone = pn.split('@')[0];
  if (lid?.endsWith('@lid')) change.lid = lid;
  const name = contact.name?.trim();
  if (name) change.name = name;
  const pushName = contact.notify?.trim();
  if (pushName) change.pushName = pushName;
  return change;
}
