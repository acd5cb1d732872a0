import { deflateSync } from 'node:zlib';
import { generateMessageID, proto } from '@whiskeysockets/baileys';
import type { Account, PhoneChat, PhoneHistoryMessage } from '../network/model.js';
import type { MediaUploads } from '../media-host.js';
import { PROFILE_PICTURE } from '../media-host.js';
import { encryptMedia } from './media-crypto.js';

/** RECENT carries the last 90 days of each conversation; FULL the older rest of what the phone keeps. */
export const RECENT_DAYS = 90;
/** Messages per history chunk: a big history goes in many notifications, each with its progress. */
const HISTORY_CHUNK_MESSAGES = 1000;
/** What one conversation keeps at most (the oldest go first). */
const CHAT_MESSAGES_LIMIT = 100_000;

const DAY_SECONDS = 86_400;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Keeps a message in its conversation, in arrival order (created when new). */
export function keepMessage(
  account: Account,
  chatJid: string,
  entry: { id: string; fromMe: boolean; timestamp: number; message: proto.IMessage },
  { unread = false, pushName }: { unread?: boolean; pushName?: string } = {},
): void {
  const chat = chatOf(account, chatJid);
  chat.messages.push({
    id: entry.id,
    fromMe: entry.fromMe,
    timestamp: entry.timestamp,
    content: Buffer.from(proto.Message.encode(entry.message).finish()),
  });
  if (chat.messages.length > CHAT_MESSAGES_LIMIT) chat.messages.splice(0, chat.messages.length - CHAT_MESSAGES_LIMIT);
  if (unread) chat.unread += 1;
  if (pushName) chat.pushName = pushName;
}

function chatOf(account: Account, jid: string): PhoneChat {
  const chats = account.phoneIdentity.chats;
  let chat = chats.get(jid);
  if (!chat) {
    chat = { jid, unread: 0, messages: [] };
    chats.set(jid, chat);
  }
  return chat;
}

export interface HistorySeed {
  chats: number;
  messagesPerChat: number;
  /** The messages of each chat are spread over this many days up to now. */
  days: number;
  /** This many chats (the first ones) end with an image, uploaded to the media host. */
  media: number;
}

/**
 * Gives the phone conversations with people who are not on the network (numbers made from its
 * own and the chat's index): every third is saved in the address book, each person has a push
 * name, a chat's unread count is its index modulo 5, and messages alternate between the phone
 * and the person, spread evenly over `days`, so that both RECENT and FULL have some of them.
 */
export async function seedHistory(account: Account, seed: HistorySeed, uploads: MediaUploads | undefined) {
  const now = nowSeconds();
  const span = seed.days * DAY_SECONDS;
  let messages = 0;
  for (let i = 0; i < seed.chats; i++) {
    const jid = `9${account.phone.slice(-8)}${String(i).padStart(5, '0')}@s.whatsapp.net`;
    const chat = chatOf(account, jid);
    if (i % 3 === 0) chat.name = `Contact ${i}`;
    chat.pushName = `Person ${i}`;
    chat.unread = i % 5;
    for (let j = 0; j < seed.messagesPerChat; j++) {
      const timestamp = now - span + Math.floor(((j + 1) * span) / (seed.messagesPerChat + 1)) - (i % 60);
      const last = j === seed.messagesPerChat - 1;
      const message =
        last && i < seed.media ? await seededImage(uploads, `Picture of chat ${i}`) : { conversation: `Message ${j} of chat ${i}` };
      chat.messages.push({
        id: generateMessageID(),
        fromMe: j % 2 === 1,
        timestamp,
        content: Buffer.from(proto.Message.encode(message).finish()),
      });
      messages += 1;
    }
  }
  return { chats: seed.chats, messages };
}

async function seededImage(uploads: MediaUploads | undefined, caption: string): Promise<proto.IMessage> {
  if (!uploads) throw new Error('the media host is not running');
  const media = await encryptMedia(PROFILE_PICTURE, 'image');
  const { url, directPath } = await uploads.upload(media.blob);
  return {
    imageMessage: {
      url,
      directPath,
      mediaKey: media.mediaKey,
      fileSha256: media.fileSha256,
      fileEncSha256: media.fileEncSha256,
      fileLength: media.fileLength,
      mimetype: 'image/jpeg',
      caption,
      mediaKeyTimestamp: nowSeconds(),
    },
  };
}

export type HistoryKind = 'recent' | 'full';

/** Whether a message of that age belongs in RECENT or in FULL. */
const inKind = (kind: HistoryKind, cutoff: number) => (m: PhoneHistoryMessage) =>
  kind === 'recent' ? m.timestamp >= cutoff : m.timestamp < cutoff;

/**
 * The phone's conversations as the chunks of one history sync (RECENT or FULL), built one at a
 * time: about HISTORY_CHUNK_MESSAGES messages each, a long conversation split across chunks (each
 * part names the chat, with its unread count and last message time), `progress` the share of the
 * sync's messages sent so far, 100 on the last. Nothing when the phone has no such messages.
 */
export function* historyChunks(account: Account, kind: HistoryKind, now = nowSeconds()): Generator<proto.IHistorySync> {
  const cutoff = now - RECENT_DAYS * DAY_SECONDS;
  const belongs = inKind(kind, cutoff);
  const chats = [...account.phoneIdentity.chats.values()];
  const total = chats.reduce((sum, chat) => sum + chat.messages.filter(belongs).length, 0);
  if (total === 0) return;
  const syncType = kind === 'recent' ? proto.HistorySync.HistorySyncType.RECENT : proto.HistorySync.HistorySyncType.FULL;
  let conversations: proto.IConversation[] = [];
  let inChunk = 0;
  let sent = 0;
  let chunkOrder = 0;
  const flush = (): proto.IHistorySync => {
    sent += inChunk;
    const chunk = { syncType, chunkOrder: chunkOrder++, progress: sent >= total ? 100 : Math.floor((100 * sent) / total), conversations };
    conversations = [];
    inChunk = 0;
    return chunk;
  };
  for (const chat of chats) {
    const messages = chat.messages.filter(belongs);
    for (let start = 0; start < messages.length; ) {
      const part = messages.slice(start, start + HISTORY_CHUNK_MESSAGES - inChunk);
      start += part.length;
      conversations.push(conversationOf(chat, part));
      inChunk += part.length;
      if (inChunk >= HISTORY_CHUNK_MESSAGES) yield flush();
    }
  }
  if (inChunk > 0) yield flush();
}

/** A chat with some of its messages, as WhatsApp's HistorySync carries it (newest message first). */
function conversationOf(chat: PhoneChat, messages: readonly PhoneHistoryMessage[]): proto.IConversation {
  const last = chat.messages.at(-1);
  return {
    id: chat.jid,
    ...(chat.name ? { name: chat.name } : {}),
    pnJid: chat.jid,
    unreadCount: chat.unread,
    ...(last ? { conversationTimestamp: last.timestamp } : {}),
    messages: messages
      .map((m, index) => ({
        msgOrderId: index + 1,
        message: {
          key: { remoteJid: chat.jid, fromMe: m.fromMe, id: m.id },
          message: proto.Message.decode(m.content),
          messageTimestamp: m.timestamp,
          ...(m.fromMe ? { status: proto.WebMessageInfo.Status.READ } : chat.pushName ? { pushName: chat.pushName } : {}),
        },
      }))
      .reverse(),
  };
}

/**
 * The phone's answer to a companion's on-demand request (Baileys `fetchMessageHistory`): up to
 * `onDemandMsgCount` messages of the chat just before the one the companion holds as its oldest
 * (found by id, else by time), as one ON_DEMAND chunk; no conversation when there are none.
 */
export function onDemandChunk(
  account: Account,
  request: proto.Message.PeerDataOperationRequestMessage.IHistorySyncOnDemandRequest,
): proto.IHistorySync {
  const syncType = proto.HistorySync.HistorySyncType.ON_DEMAND;
  const chat = request.chatJid ? account.phoneIdentity.chats.get(request.chatJid) : undefined;
  if (!chat) return { syncType, chunkOrder: 0, progress: 100, conversations: [] };
  const byId = chat.messages.findIndex((m) => m.id === request.oldestMsgId);
  const before = Number(request.oldestMsgTimestampMs ?? 0) / 1000;
  const end = byId >= 0 ? byId : chat.messages.filter((m) => m.timestamp < before).length;
  const count = Math.max(0, Math.min(Number(request.onDemandMsgCount ?? 0), 50));
  const part = chat.messages.slice(Math.max(0, end - count), end);
  return { syncType, chunkOrder: 0, progress: 100, conversations: part.length > 0 ? [conversationOf(chat, part)] : [] };
}

/** The push names of the people the phone has conversations with, for its PUSH_NAME sync. */
export function chatPushNames(account: Account): proto.IPushname[] {
  return [...account.phoneIdentity.chats.values()].flatMap((chat) => (chat.pushName ? [{ id: chat.jid, pushname: chat.pushName }] : []));
}

/**
 * The notification of one history chunk, as WhatsApp's phone sends a sync too big to go inline:
 * the chunk deflated, encrypted like media of type 'md-msg-hist' and uploaded to the media host;
 * the companion downloads and decrypts it (Baileys Utils/history.js `downloadHistory`).
 */
export async function uploadedHistoryNotification(
  chunk: proto.IHistorySync,
  uploads: MediaUploads | undefined,
  /** The id of the companion's request an ON_DEMAND chunk answers. */
  peerDataRequestSessionId?: string,
): Promise<proto.IMessage> {
  if (!uploads) throw new Error('the media host is not running');
  const media = await encryptMedia(deflateSync(proto.HistorySync.encode(chunk).finish()), 'md-msg-hist');
  const { directPath } = await uploads.upload(media.blob);
  const oldest = Math.min(
    ...(chunk.conversations ?? []).flatMap((c) => (c.messages ?? []).map((m) => Number(m.message?.messageTimestamp ?? 0))),
  );
  return {
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
      historySyncNotification: {
        fileSha256: media.fileSha256,
        fileLength: media.fileLength,
        mediaKey: media.mediaKey,
        fileEncSha256: media.fileEncSha256,
        directPath,
        syncType: chunk.syncType as unknown as proto.Message.HistorySyncType,
        chunkOrder: chunk.chunkOrder ?? 0,
        progress: chunk.progress ?? 100,
        ...(peerDataRequestSessionId ? { peerDataRequestSessionId } : {}),
        ...(Number.isFinite(oldest) ? { oldestMsgInChunkTimestampSec: oldest } : {}),
      },
    },
  };
}
