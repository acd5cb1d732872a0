/**
 * What one history chunk becomes in the store, without I/O: its messages mapped like live ones
 * (map-message.ts) and marked `historical`, and per chat the change it brings (the phone's unread
 * count as a floor, the time of its last message, a name), and what finds each message's media on
 * WhatsApp (fetched on its first download, media-fetch.ts). Reactions, edits, revokes and votes in
 * the history are not applied: the phone's copy of a message already carries their outcome.
 */
import { proto, type Chat as BaileysChat, type WAMessage } from '@whiskeysockets/baileys';
import { MESSAGE_ID_PATTERN, isGroupJid, isUserJid, normalizeJid } from '../../core/jid.js';
import type { Message } from '../../core/schemas/message.js';
import type { ChatChange } from '../../core/store/chats.js';
import type { AccountSettings } from '../../core/schemas/settings.js';
import { mapInboundMessage } from '../inbound/map-message.js';
import { statusFromBaileys } from '../inbound/status.js';

export type SyncKind = 'bootstrap' | 'recent' | 'full' | 'on_demand';

const { HistorySyncType } = proto.HistorySync;

/** The kinds of sync that carry conversations; push names and the rest are Baileys' alone. */
const KINDS = new Map<number, SyncKind>([
  [HistorySyncType.INITIAL_BOOTSTRAP, 'bootstrap'],
  [HistorySyncType.RECENT, 'recent'],
  [HistorySyncType.FULL, 'full'],
  [HistorySyncType.ON_DEMAND, 'on_demand'],
]);

export function syncKindOf(notification: proto.Message.IHistorySyncNotification): SyncKind | undefined {
  // An absent syncType decodes as the proto default, INITIAL_BOOTSTRAP (0).
  return KINDS.get(notification.syncType ?? HistorySyncType.INITIAL_BOOTSTRAP);
}

/**
 * Whether the account's `history` setting imports a sync of this kind. A history asked for
 * explicitly (on demand) is always imported.
 */
export function settingImports(mode: AccountSettings['history'], kind: SyncKind): boolean {
  if (kind === 'on_demand') return true;
  if (mode === 'none') return false;
  return kind !== 'full' || mode === 'full';
}

export interface ChunkPlan {
  messages: Message[];
  /** Messages with media: their content as proto.Message bytes, which finds the media on WhatsApp later. */
  media: Array<{ messageId: string; timestamp: number; content: Uint8Array }>;
  chats: Array<{ chatId: string; change: ChatChange }>;
}

/** Chats named by this import: a person's saved name (or a group's subject), else a push name seen in the chunk. */
interface Names {
  savedNameOf(jid: string): string | undefined;
}

/** `ignoreGroups`: the account's setting; group chats and their messages are then left out, as live ones are. */
interface PlanOptions {
  ignoreGroups?: boolean;
}

/** The rows and chat changes of a chunk (Baileys' processHistoryMessage output). */
export function planChunk(
  history: { chats: readonly BaileysChat[]; messages: readonly WAMessage[] },
  selfJid: string,
  names: Names,
  { ignoreGroups = false }: PlanOptions = {},
): ChunkPlan {
  const kept = (chatId: string) => isChatId(chatId) && !(ignoreGroups && isGroupJid(chatId));
  const messages: Message[] = [];
  const media: ChunkPlan['media'] = [];
  const pushNames = new Map<string, string>();
  const newest = new Map<string, number>();
  for (const msg of history.messages) {
    if (!msg.key.id || !MESSAGE_ID_PATTERN.test(msg.key.id)) continue;
    const action = mapInboundMessage(msg, selfJid);
    if (action.kind !== 'message' || !kept(action.message.chatId)) continue;
    const status = action.message.fromMe ? statusFromBaileys(msg.status) : undefined;
    messages.push({ ...action.message, ...(status && !action.message.status ? { status } : {}), historical: true });
    if (action.media && msg.message)
      media.push({ messageId: msg.key.id, timestamp: action.message.timestamp, content: proto.Message.encode(msg.message).finish() });
    newest.set(action.message.chatId, Math.max(newest.get(action.message.chatId) ?? 0, action.message.timestamp));
    if (!action.message.fromMe && msg.pushName && action.message.from === action.message.chatId) {
      pushNames.set(action.message.chatId, msg.pushName);
    }
  }
  const chats: ChunkPlan['chats'] = [];
  for (const chat of history.chats) {
    const chatId = chat.id ? normalizeJid(chat.id) : undefined;
    if (!chatId || !kept(chatId)) continue;
    const seconds = Number(chat.conversationTimestamp ?? 0);
    const at = seconds > 0 ? seconds * 1000 : (newest.get(chatId) ?? 0);
    if (!at) continue;
    const name = (chat.displayName || chat.name || undefined) ?? names.savedNameOf(chatId) ?? pushNames.get(chatId);
    const unread = Number(chat.unreadCount ?? 0);
    chats.push({ chatId, change: { at, unreadAtLeast: Math.max(0, unread), ...(name ? { name } : {}) } });
  }
  return { messages, media, chats };
}

/** Chats the gateway keeps: people (by phone number or LID) and groups. */
const isChatId = (jid: string) => isUserJid(jid) || isGroupJid(jid) || /^\d{5,25}@lid$/.test(jid);
