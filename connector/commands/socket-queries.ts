import type { WASocket } from '@whiskeysockets/baileys';
import { apiJid } from '../../core/schemas/group.js';
import type { SocketQuery, SocketQueryAnswer } from '../../core/schemas/socket-query.js';
import { refusalOf } from './group-operations.js';

/** Asks WhatsApp one socket query on the account's live socket and shapes its answer for the API. */
export async function runSocketQuery(sock: WASocket, query: SocketQuery): Promise<SocketQueryAnswer> {
  switch (query.op) {
    case 'contact_exists': {
      // usync `contact` query; an unknown number comes back without `exists` (or not at all).
      const found = (await sock.onWhatsApp(query.phone))?.find((r) => r.exists);
      return found ? { exists: true, jid: apiJid(found.jid) } : { exists: false };
    }
    case 'contact_picture':
      try {
        return { url: (await sock.profilePictureUrl(query.jid, 'image')) ?? null };
      } catch (error) {
        // item-not-found (no picture, unknown JID) and not-authorized (hidden by privacy) both mean none to show.
        const refusal = refusalOf(error)?.refusal;
        if (refusal === 'not_found' || refusal === 'not_admin') return { url: null };
        throw error;
      }
  }
}
