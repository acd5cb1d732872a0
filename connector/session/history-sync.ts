import { proto } from '@whiskeysockets/baileys';

const { HistorySyncType } = proto.Message;

/**
 * History syncs the phone pushes to a newly linked device that Baileys may process: the ones that
 * carry LID<->phone-number mappings and push names. Refusing every type (`() => false`) makes
 * Baileys warn "DANGER: DISABLING ALL SYNC BY shouldSyncHistoryMsg PREVENTS BAILEYS FROM
 * ACCESSING INITIAL LID MAPPINGS" (Socket/socket.js): without those mappings, decrypting and
 * addressing LID-addressed traffic fails. Message history (RECENT, FULL, ON_DEMAND) and status
 * updates are refused here: Baileys would download a chunk after receipting it and hand it over
 * in an event nothing makes durable. The gateway imports them itself from the notification's
 * upsert instead, under its write-ahead record (connector/history/history-import.ts). Refusing
 * RECENT also tells Baileys not to hold events back for up to 20 s waiting for history on first
 * login (Socket/chats.js, `willSyncHistory`); a bootstrap that arrives later is still processed.
 */
const ACCEPTED_HISTORY_SYNCS: ReadonlySet<proto.Message.HistorySyncType> = new Set([
  HistorySyncType.INITIAL_BOOTSTRAP,
  HistorySyncType.PUSH_NAME,
  HistorySyncType.NON_BLOCKING_DATA,
]);

export function shouldSyncHistoryMessage(notification: proto.Message.IHistorySyncNotification): boolean {
  // An absent syncType decodes as the proto default, INITIAL_BOOTSTRAP (0).
  return ACCEPTED_HISTORY_SYNCS.has(notification.syncType ?? HistorySyncType.INITIAL_BOOTSTRAP);
}
