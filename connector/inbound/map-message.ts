/**
 * Pure mapping from a Baileys WAMessage to what the gateway does with it:
 *
 *   mapInboundMessage(msg, selfJid) -> InboundAction
 *     { kind: 'message', message, media? }   a new row (text, media, location, contact, unknown)
 *     { kind: 'reaction', targetMessageId, reaction }   update of a stored message
 *     { kind: 'revoke', targetMessageId }    "deleted for everyone": update of a stored message
 *     { kind: 'edit', targetMessageId, text?, caption? }   new text of a stored message
 *     { kind: 'skip', reason }               status broadcasts, protocol-only and empty stubs
 *
 * No I/O here: the pipeline (pipeline.ts) stores and enqueues. `selfJid` is the account's own
 * JID (sock.user.id, device suffix allowed): `from` of messages the account sent itself.
 */
import {
  getContentType,
  isJidGroup,
  isJidStatusBroadcast,
  isLidUser,
  isPnUser,
  jidNormalizedUser,
  normalizeMessageContent,
  proto,
  type WAMessage,
} from '@whiskeysockets/baileys';
import type { Message, MessageType } from '../../core/schemas/message.js';

export interface Reaction {
  from: string;
  /** Empty when the sender removed their reaction. */
  emoji: string;
  timestamp: number;
}

/** What the pipeline needs to fetch and store the message's media. */
export interface MediaDescriptor {
  mimetype: string;
  fileName?: string;
  fileLength?: number;
}

/** An encrypted poll vote, with what its decryption needs besides the poll's secret (poll-votes.ts). */
export interface PollVote {
  chatId: string;
  pollMessageId: string;
  /** The voter as stored (`from`), and every JID the voter may have encrypted under (phone number, LID). */
  from: string;
  voterJids: string[];
  /** The account's own vote, cast from its phone or another linked device. */
  fromMe: boolean;
  encPayload: Uint8Array;
  encIv: Uint8Array;
  timestamp: number;
}

export type InboundAction =
  | { kind: 'message'; message: Message; media?: MediaDescriptor; pollSecret?: Uint8Array }
  | ({ kind: 'poll_vote' } & PollVote)
  | ({ kind: 'reaction'; targetMessageId: string; reaction: Reaction } & UpdateOrigin)
  | ({ kind: 'revoke'; targetMessageId: string } & UpdateOrigin)
  | ({ kind: 'edit'; targetMessageId: string; text?: string; caption?: string } & UpdateOrigin)
  | { kind: 'skip'; reason: string };

/** Where an update of a stored message comes from: its chat, its sender, its own id and time. */
export interface UpdateOrigin {
  chatId: string;
  from: string;
  fromMe: boolean;
  /** The id of the reaction, revoke or edit message itself. */
  updateId: string;
  timestamp: number;
}

type Long = { toNumber(): number };
type LongOrNumber = number | Long | null | undefined;

const MEDIA_TYPES: ReadonlySet<MessageType> = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/** Default mimetype per kind when the sender left it out (WhatsApp's own defaults). */
const DEFAULT_MIMETYPES: Record<string, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/ogg; codecs=opus',
  document: 'application/octet-stream',
  sticker: 'image/webp',
};

export function mapInboundMessage(msg: WAMessage, selfJid: string): InboundAction {
  const key = msg.key;
  const remoteJid = key.remoteJid;
  if (!remoteJid || !key.id) return { kind: 'skip', reason: 'no key' };
  if (isJidStatusBroadcast(remoteJid)) return { kind: 'skip', reason: 'status broadcast' };

  const content = normalizeMessageContent(msg.message);
  const contentType = content ? getContentType(content) : undefined;
  if (!content || !contentType) return { kind: 'skip', reason: 'no content' };

  const chatId = preferPhoneNumber(remoteJid, key.remoteJidAlt);
  const fromMe = key.fromMe === true;
  const from = fromMe ? jidNormalizedUser(selfJid) : key.participant ? preferPhoneNumber(key.participant, key.participantAlt) : chatId;
  const timestamp = toNumber(msg.messageTimestamp) * 1000;
  const origin: UpdateOrigin = { chatId, from, fromMe, updateId: key.id, timestamp };

  if (contentType === 'protocolMessage') {
    const protocol = content.protocolMessage;
    if (protocol?.type === proto.Message.ProtocolMessage.Type.REVOKE && protocol.key?.id) {
      return { kind: 'revoke', ...origin, targetMessageId: protocol.key.id };
    }
    if (protocol?.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT && protocol.key?.id && protocol.editedMessage) {
      const edited = normalizeMessageContent(protocol.editedMessage);
      const editedType = edited ? getContentType(edited) : undefined;
      if (edited && editedType) {
        const { text, caption } = contentFields(edited, editedType);
        if (text !== undefined || caption !== undefined) {
          return {
            kind: 'edit',
            ...origin,
            targetMessageId: protocol.key.id,
            ...(text !== undefined ? { text } : {}),
            ...(caption !== undefined ? { caption } : {}),
          };
        }
      }
    }
    return { kind: 'skip', reason: 'protocol message' };
  }
  if (contentType === 'pollUpdateMessage') {
    const update = content.pollUpdateMessage;
    const pollMessageId = update?.pollCreationMessageKey?.id;
    const { encPayload, encIv } = update?.vote ?? {};
    if (!pollMessageId || !encPayload || !encIv) return { kind: 'skip', reason: 'poll vote without poll or payload' };
    const sender = fromMe ? selfJid : (key.participant ?? remoteJid);
    const senderAlt = fromMe ? undefined : key.participant ? key.participantAlt : key.remoteJidAlt;
    const voterJids = [...new Set([sender, senderAlt, from].filter((jid): jid is string => Boolean(jid)).map(jidNormalizedUser))];
    return {
      kind: 'poll_vote',
      chatId,
      pollMessageId,
      from,
      voterJids,
      fromMe,
      encPayload,
      encIv,
      timestamp: toNumber(update?.senderTimestampMs) || timestamp,
    };
  }
  if (contentType === 'reactionMessage') {
    const reaction = content.reactionMessage;
    if (!reaction?.key?.id) return { kind: 'skip', reason: 'reaction without target' };
    const reactedAt = toNumber(reaction.senderTimestampMs) || timestamp;
    return {
      kind: 'reaction',
      ...origin,
      timestamp: reactedAt,
      targetMessageId: reaction.key.id,
      reaction: { from, emoji: reaction.text ?? '', timestamp: reactedAt },
    };
  }

  const base = {
    messageId: key.id,
    from,
    chatId,
    timestamp,
    fromMe,
    ...(fromMe ? {} : senderAddresses(key)),
    ...(isJidGroup(chatId) ? { participant: from } : {}),
  };
  const fields = contentFields(content, contentType);
  const message: Message = { ...base, ...fields };
  const quotedMessageId = contextInfoOf(content, contentType)?.stanzaId;
  if (quotedMessageId) message.quotedMessageId = quotedMessageId;

  if (message.type === 'poll') {
    const pollSecret = msg.message?.messageContextInfo?.messageSecret ?? content.messageContextInfo?.messageSecret;
    return { kind: 'message', message, ...(pollSecret ? { pollSecret } : {}) };
  }
  if (!MEDIA_TYPES.has(message.type)) return { kind: 'message', message };
  message.hasMedia = true;
  const mimetype = message.mimetype ?? DEFAULT_MIMETYPES[message.type] ?? 'application/octet-stream';
  return {
    kind: 'message',
    message,
    media: {
      mimetype,
      ...(message.fileName ? { fileName: message.fileName } : {}),
      ...(message.fileLength !== undefined ? { fileLength: message.fileLength } : {}),
    },
  };
}

/** Type and type-specific fields of a message's content. */
function contentFields(content: proto.IMessage, contentType: keyof proto.IMessage): Pick<Message, 'type'> & Partial<Message> {
  switch (contentType) {
    case 'conversation':
      return { type: 'text', text: content.conversation ?? '' };
    case 'extendedTextMessage':
      return { type: 'text', text: content.extendedTextMessage?.text ?? '' };
    case 'imageMessage': {
      const image = content.imageMessage;
      return { type: 'image', ...mediaFields(image), ...optional('caption', image?.caption) };
    }
    case 'videoMessage':
    case 'ptvMessage': {
      const video = content.videoMessage ?? content.ptvMessage;
      return {
        type: 'video',
        ...mediaFields(video),
        ...optional('caption', video?.caption),
        ...optional('seconds', video?.seconds),
      };
    }
    case 'audioMessage': {
      const audio = content.audioMessage;
      return {
        type: 'audio',
        ...mediaFields(audio),
        ...optional('seconds', audio?.seconds),
        ptt: audio?.ptt === true,
      };
    }
    case 'documentMessage': {
      const document = content.documentMessage;
      return {
        type: 'document',
        ...mediaFields(document),
        ...optional('fileName', document?.fileName),
        ...optional('caption', document?.caption),
      };
    }
    case 'stickerMessage':
      return { type: 'sticker', ...mediaFields(content.stickerMessage) };
    case 'locationMessage':
    case 'liveLocationMessage': {
      const location = content.locationMessage ?? content.liveLocationMessage;
      const name = content.locationMessage?.name;
      const latitude = location?.degreesLatitude ?? 0;
      const longitude = location?.degreesLongitude ?? 0;
      const coordinates = `${latitude},${longitude}`;
      return {
        type: 'location',
        text: name ? `${name} (${coordinates})` : coordinates,
        latitude,
        longitude,
        ...optional('name', name),
        ...optional('address', content.locationMessage?.address),
      };
    }
    case 'contactMessage': {
      const vcard = content.contactMessage?.vcard;
      return { type: 'contact', text: content.contactMessage?.displayName ?? '', ...(vcard ? { vcards: [vcard] } : {}) };
    }
    case 'contactsArrayMessage': {
      const contacts = content.contactsArrayMessage?.contacts ?? [];
      const names = contacts.map((c) => c.displayName).filter(Boolean);
      const vcards = contacts.map((c) => c.vcard).filter((vcard): vcard is string => Boolean(vcard));
      return { type: 'contact', text: names.join(', '), ...(vcards.length > 0 ? { vcards } : {}) };
    }
    case 'pollCreationMessage':
    case 'pollCreationMessageV2':
    case 'pollCreationMessageV3': {
      const poll = content.pollCreationMessage ?? content.pollCreationMessageV2 ?? content.pollCreationMessageV3;
      return {
        type: 'poll',
        text: poll?.name ?? '',
        pollOptions: (poll?.options ?? []).map((option) => option.optionName ?? ''),
        selectableCount: poll?.selectableOptionsCount ?? 0,
      };
    }
    default:
      return { type: 'unknown' };
  }
}

function mediaFields(media: { mimetype?: string | null; fileLength?: LongOrNumber } | null | undefined): Partial<Message> {
  const fileLength = media?.fileLength == null ? undefined : toNumber(media.fileLength);
  return { ...optional('mimetype', media?.mimetype), ...optional('fileLength', fileLength) };
}

function contextInfoOf(content: proto.IMessage, contentType: keyof proto.IMessage): proto.IContextInfo | null | undefined {
  const inner: unknown = content[contentType];
  if (inner && typeof inner === 'object' && 'contextInfo' in inner) {
    return (inner as { contextInfo?: proto.IContextInfo | null }).contextInfo;
  }
  return undefined;
}

/** `{ [name]: value }` when value is set (not null, undefined or an empty string), else `{}`. */
function optional<K extends string, V>(name: K, value: V | null | undefined): Partial<Record<K, V>> {
  if (value === null || value === undefined || value === '') return {};
  return { [name]: value } as Partial<Record<K, V>>;
}

/** protobuf int64 fields arrive as Long objects or plain numbers. */
function toNumber(value: LongOrNumber): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'number' ? value : value.toNumber();
}

/**
 * With LID addressing Baileys gives the hidden user id and the phone-number JID as its "alt":
 * chats and senders are keyed by phone number, as the API's `to` is.
 */
function preferPhoneNumber(jid: string, alt: string | undefined): string {
  if (isLidUser(jid) && alt && isPnUser(alt)) return jidNormalizedUser(alt);
  return jidNormalizedUser(jid);
}

/**
 * The sender's phone-number and LID JIDs when WhatsApp gave both (the addressed JID and its
 * "alt": remoteJid/remoteJidAlt in a one-to-one chat, participant/participantAlt in a group).
 */
function senderAddresses(key: WAMessage['key']): { fromPn?: string; fromLid?: string } {
  const jid = key.participant || key.remoteJid;
  const alt = key.participant ? key.participantAlt : key.remoteJidAlt;
  if (!jid || !alt) return {};
  const pair = [jidNormalizedUser(jid), jidNormalizedUser(alt)];
  const fromPn = pair.find((candidate) => isPnUser(candidate));
  const fromLid = pair.find((candidate) => isLidUser(candidate));
  return fromPn && fromLid ? { fromPn, fromLid } : {};
}
