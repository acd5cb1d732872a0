import { Browsers, makeWASocket, type WASocket } from '@whiskeysockets/baileys';
import type { Logger } from '../../core/logger.js';
import { withTimeout } from '../../core/with-timeout.js';
import type { WaVersion } from '../../core/wa-version.js';
import type { AccountSettings } from '../../core/schemas/settings.js';
import type { DynamoAuthState } from '../auth/dynamo-auth-state.js';
import type { Inbox } from '../inbound/inbox.js';
import type { NetworkOptions } from '../network/network-options.js';
import type { WaVersionKeeper } from '../wa-version/wa-version-keeper.js';
import { durableDecryption } from './durable-decrypt.js';
import type { Dispatcher } from './event-dispatcher.js';
import type { GroupMetadataCache } from './group-metadata.js';
import type { GroupSubjects } from './group-subjects.js';
import { shouldSyncHistoryMessage } from './history-sync.js';
import type { sentMessageLookup } from './sent-content.js';
import { boundLidMappingCache, type socketCaches } from './socket-caches.js';

/** Bound on waiting for Baileys to close: `sock.end()` can hang on a dead WebSocket. */
const STOP_TIMEOUT_MS = 3_000;
/** Bound on finishing the storage of messages received before a stop. */
export const DRAIN_TIMEOUT_MS = 15_000;

/** What a new socket of one account is made with: the session's parts that outlive a reconnect. */
export interface SocketParts {
  auth: DynamoAuthState;
  network: NetworkOptions;
  log: Logger;
  waVersion: Pick<WaVersionKeeper, 'current'>;
  /** Baileys' per-socket caches, bounded (socket-caches.ts); kept across reconnects. */
  caches: ReturnType<typeof socketCaches>;
  /** Decrypted messages are written here before their receipt (durable-decrypt.ts). */
  inbox: Inbox;
  /** Baileys' `getMessage`: a message this account sent, asked for again by its recipient (sent-content.ts). */
  sentMessages: ReturnType<typeof sentMessageLookup>;
  /** Names the account's group chats. */
  groupSubjects: GroupSubjects;
  /** Group participants for sends, so that a send to a group does not ask WhatsApp for them each time. */
  groupMetadata: GroupMetadataCache;
  /** The account's settings now: `history: 'full'` asks the phone for its full history when linking. */
  settings(): AccountSettings;
}

/**
 * Makes the account's next socket (Baileys' makeWASocket) with the session's auth state and
 * caches, announcing the keeper's current WhatsApp Web version, and sets its watchers going. The
 * caller attaches the event dispatcher. Returns the socket and the version it announced.
 */
export function openWASocket(parts: SocketParts): { sock: WASocket; version: WaVersion } {
  const { auth, log, groupMetadata } = parts;
  const durable = durableDecryption((part) => parts.inbox.record(part));
  const version = parts.waVersion.current().version;
  const sock = makeWASocket({
    ...parts.network.socket,
    ...parts.caches,
    version: [...version],
    auth: auth.state,
    logger: log.child({ component: 'baileys' }, { level: log.isLevelEnabled('debug') ? 'debug' : 'warn' }),
    browser: Browsers.ubuntu('Chrome'),
    markOnlineOnConnect: false,
    // Sent to the phone only when linking (DeviceProps.requireFullSync): a later change of the
    // setting needs a new link to bring the full history.
    syncFullHistory: parts.settings().history === 'full',
    shouldSyncHistoryMessage,
    generateHighQualityLinkPreview: false,
    makeSignalRepository: durable.makeSignalRepository,
    cachedGroupMetadata: (groupJid) => groupMetadata.metadataOf(sock, groupJid),
    getMessage: parts.sentMessages,
  });
  durable.watch(sock.ws);
  if (!boundLidMappingCache(sock)) log.warn('Baileys LID mapping cache not found: it stays unbounded');
  parts.groupSubjects.watch(sock);
  groupMetadata.clear();
  groupMetadata.watch(sock);
  return { sock, version };
}

/** Unlinks the device of `sock` from the phone, best effort and bounded. */
export async function logOutBounded(sock: WASocket, log: Logger): Promise<void> {
  const result = await withTimeout(
    sock.logout('account deleted').catch((error: unknown) => log.warn({ err: error }, 'logout failed')),
    STOP_TIMEOUT_MS,
  );
  if (result === 'timed_out') log.warn('logout timed out');
}

/**
 * Ends `sock`, whose `dispatcher` the session detached already, bounded, then waits for the
 * messages it delivered to be stored.
 */
export async function endSocket(sock: WASocket | undefined, dispatcher: Dispatcher | undefined, inbox: Inbox, log: Logger): Promise<void> {
  if (!sock) return;
  const result = await withTimeout(
    sock.end(undefined).catch((error: unknown) => log.warn({ err: error }, 'socket end failed')),
    STOP_TIMEOUT_MS,
  );
  if (result === 'timed_out') {
    log.warn('socket did not close in time: dropping it');
    sock.ws.close();
  }
  // Messages the network already delivered are stored before the session reports it stopped.
  if ((await withTimeout(dispatcher?.drained() ?? Promise.resolve(), DRAIN_TIMEOUT_MS)) === 'timed_out') {
    log.warn('inbound messages still being stored after the socket closed');
  }
  await inbox.drained();
}
