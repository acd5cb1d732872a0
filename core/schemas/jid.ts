import { z } from 'zod';
import { normalizeJid } from '../jid.js';

/**
 * A user (`<digits>@s.whatsapp.net`), group (`@g.us`) or LID (`@lid`) JID, parsed to its
 * normalised form (lower case, device suffix dropped). `field` names it in the error, which is
 * the client-facing `<field> must be a valid JID`.
 */
export function jidSchema(field: string) {
  const error = `${field} must be a valid JID`;
  return z.string({ error }).transform((value, ctx) => {
    const jid = normalizeJid(value);
    if (!jid) {
      ctx.addIssue({ code: 'custom', message: error });
      return z.NEVER;
    }
    return jid;
  });
}
