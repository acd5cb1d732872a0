import { jidNormalizedUser, type Contact, type WASocket } from '@whiskeysockets/baileys';

/**
 * The account's own push name, the name its user set on the phone. Baileys announces presence
 * (`available`/`unavailable`) only with one (Socket/chats.js, sendPresenceUpdate) and learns it
 * from the app-state push-name setting or from a message the phone sends, so a freshly linked
 * account often has none. The phone's push-name history sync (PUSH_NAME, right after linking)
 * may name the account among its push names: that name is taken, never one the gateway makes
 * up, since renaming the account (Baileys' updateProfileName) would rename the user's phone too.
 * Emitting `creds.update` makes Baileys tell WhatsApp the name (`<presence name=...>`) and the
 * session persist it with the credentials.
 */
export function learnOwnPushName(sock: WASocket, contacts: readonly Partial<Contact>[]): string | undefined {
  const me = sock.authState.creds.me;
  if (!me || me.name) return undefined;
  const own = new Set([me.id, me.lid].filter((jid): jid is string => !!jid).map((jid) => jidNormalizedUser(jid)));
  const name = contacts.find((contact) => contact.id && own.has(jidNormalizedUser(contact.id)) && contact.notify)?.notify;
  if (!name) return undefined;
  sock.ev.emit('creds.update', { me: { ...me, name } });
  return name;
}
