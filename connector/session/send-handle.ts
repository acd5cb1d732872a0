import type { Readable } from 'node:stream';
import { downloadMediaMessage, type WAMessage, type WASocket } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
import type { Logger } from '../../core/logger.js';
import type { ContactBook } from './contact-book.js';
import type { Inbox } from '../inbound/inbox.js';
import type { InboundContext } from '../inbound/pipeline.js';
import type { NetworkOptions } from '../network/network-options.js';
import type { GroupMetadataCache } from './group-metadata.js';
import type { GroupSubjects } from './group-subjects.js';
import type { AccountSettings } from '../../core/schemas/settings.js';
import { sentContentOf } from './sent-content.js';
import { expectServerAck, type AwaitedAck } from './server-acks.js';

/** See `AccountSession.sendHandle`. */
export interface SendHandle {
  sock: WASocket;
  /** The socket's group metadata (Baileys' cachedGroupMetadata): group operations keep it current. */
  groupMetadata: GroupMetadataCache;
  noteOwnSend(messageId: string): void;
  storeContext: InboundContext | undefined;
  /**
   * A sent message encoded for its outbound record (sent-content.ts). Here rather than imported
   * by the send handlers: encoding needs Baileys' protobufs, which only the session code loads.
   */
  contentToKeep(sent: WAMessage): Uint8Array | undefined;
  /** Starts waiting for WhatsApp's ack of a message about to be sent (server-acks.ts). */
  expectServerAck(messageId: string, timeoutMs: number, onLateNack?: (error: string) => void): AwaitedAck;
}

const OWN_SENDS_LIMIT = 5_000;
const OWN_SENDS_TTL_MS = 10 * 60_000;

/**
 * Message ids sent by commands in the last 10 minutes, so Baileys' echo of them (which comes
 * within seconds) is not stored twice; the most recent OWN_SENDS_LIMIT at most.
 */
export const ownSendsCache = (): BoundedCache<string, true> =>
  new BoundedCache<string, true>('own-sends', OWN_SENDS_LIMIT, OWN_SENDS_TTL_MS);

/** The session's parts the inbound context of a socket is made of. */
export interface ContextParts {
  network: NetworkOptions;
  log: Logger;
  groupSubjects: GroupSubjects;
  groupMetadata: GroupMetadataCache;
  inbox: Inbox;
  /** The account's contacts as this session learns them (contact-book.ts). */
  contacts: ContactBook;
  /** The account's settings now. */
  settings(): AccountSettings;
}

/** The inbound context of `sock`, undefined before the account's own JID (`selfJid`) is known. */
export function inboundContextOf(sock: WASocket, selfJid: string | undefined, parts: ContextParts): InboundContext | undefined {
  if (!selfJid) return undefined;
  const { log, groupSubjects, groupMetadata, inbox, settings, contacts } = parts;
  const dispatcher = parts.network.downloadDispatcher;
  return {
    selfJid,
    download: (message: WAMessage): Promise<Readable> =>
      downloadMediaMessage(message, 'stream', dispatcher ? { options: { dispatcher } } : {}, {
        logger: log,
        reuploadRequest: sock.updateMediaMessage,
      }),
    groupSubject: (groupJid) => groupSubjects.subjectOf((jid) => groupMetadata.metadataOf(sock, jid), groupJid),
    writeAhead: (messageId) => (inbox.holds(messageId) ? 'live' : undefined),
    heldUntil: (messageId, handOff) => inbox.holdUntil(messageId, handOff),
    ignoreGroups: () => settings().ignoreGroups,
    savedNameOf: (jid) => contacts.savedNameOf(jid),
  };
}

/** The send handle of a connected `sock`; `ownSends`: see `ownSendsCache`. */
export function sendHandleOf(
  sock: WASocket,
  groupMetadata: GroupMetadataCache,
  ownSends: BoundedCache<string, true>,
  storeContext: InboundContext | undefined,
): SendHandle {
  return {
    sock,
    groupMetadata,
    // Remembers an id a command is about to send (see `ownSendsCache`).
    noteOwnSend: (messageId) => {
      ownSends.set(messageId, true);
    },
    storeContext,
    contentToKeep: sentContentOf,
    expectServerAck: (messageId, timeoutMs, onLateNack) => expectServerAck(sock, messageId, timeoutMs, onLateNack),
  };
}
