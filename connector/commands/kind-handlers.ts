import type { AnyMessageContent, WAMessageKey } from '@whiskeysockets/baileys';
import { whyNotEditable } from '../../core/edit-window.js';
import { accountObjectPrefix } from '../../core/keys.js';
import { getStream } from '../../core/media-store.js';
import type { CommandOf } from '../../core/schemas/command.js';
import type { Message } from '../../core/schemas/message.js';
import { chatWriterOf } from '../../core/store/chat-writer.js';
import { findMedia } from '../../core/store/media.js';
import { findMessage, listMessages } from '../../core/store/messages.js';
import { contactVcard } from '../../core/vcard.js';
import { buildOutgoingMediaContent, releaseOutgoingMediaContent } from '../media/outgoing.js';
import { stickerWebp, type Sticker } from '../media/sticker.js';
import { keyOf, type PreparedSend, type SendDeps, SendRejectedError, sendRunner } from './send-handlers.js';
import { dropUploadWhenSettled } from './settled-upload.js';

/** How far back a read looks for the chat's unread messages (they are the newest ones). */
const READ_LOOKBACK = 200;

const FORWARDED = { contextInfo: { isForwarded: true, forwardingScore: 1 } };

const stickerContent = ({ webp, animated }: Sticker) => ({ sticker: webp, mimetype: 'image/webp', isAnimated: animated });

/** Baileys' presence names for the API's states. */
const PRESENCE = {
  typing: 'composing',
  recording: 'recording',
  paused: 'paused',
  available: 'available',
  unavailable: 'unavailable',
} as const;

/**
 * The message kinds beyond text and media (location, contact, poll, sticker, edit, forward) and
 * the actions that send no message (read receipts, presence). Each goes the way of every send
 * (send-handlers.ts): outbound record, claim, send, store, finish.
 */
export function kindHandlers(deps: SendDeps) {
  const { table } = deps;
  const runSend = sendRunner(deps);

  async function storedMessage(accountId: string, messageId: string): Promise<Message> {
    const message = await findMessage(table, accountId, messageId);
    if (!message) throw new SendRejectedError('message not found');
    return message;
  }

  /** What a stored message is sent again as, with its media read back from S3. */
  async function forwardContent(accountId: string, jid: string, source: Message): Promise<PreparedSend> {
    if (source.revoked) throw new SendRejectedError('the message was deleted');
    if (source.type === 'text') return { jid, content: { text: source.text ?? '', ...FORWARDED } };
    if (source.type === 'location' && source.latitude !== undefined && source.longitude !== undefined) {
      return {
        jid,
        content: {
          location: {
            degreesLatitude: source.latitude,
            degreesLongitude: source.longitude,
            ...(source.name ? { name: source.name } : {}),
            ...(source.address ? { address: source.address } : {}),
          },
        },
      };
    }
    if (source.type === 'contact' && source.vcards?.length) {
      return {
        jid,
        content: {
          contacts: { ...(source.text ? { displayName: source.text } : {}), contacts: source.vcards.map((vcard) => ({ vcard })) },
        },
      };
    }
    if (!source.mediaId) throw new SendRejectedError(`a ${source.type} message without stored media cannot be forwarded`);
    const media = await findMedia(table, accountId, source.mediaId);
    const object = media ? await getStream(deps.mediaStore, media.s3Key) : undefined;
    if (!media || !object) throw new SendRejectedError('the stored media of the message is gone');
    if (source.type === 'sticker') {
      return { jid, content: stickerContent(await stickerWebp(object.body)) };
    }
    if (source.type !== 'image' && source.type !== 'video' && source.type !== 'audio' && source.type !== 'document') {
      object.body.destroy();
      throw new SendRejectedError(`a ${source.type} message cannot be forwarded`);
    }
    const content = await buildOutgoingMediaContent({
      kind: source.type,
      source: object.body,
      mimetype: media.mimetype,
      ...(media.fileName ? { fileName: media.fileName } : {}),
      ...(source.caption ? { caption: source.caption } : {}),
      ...(source.type === 'audio' ? { ptt: source.ptt === true } : {}),
    });
    const marked: AnyMessageContent = source.type === 'audio' ? content : { ...content, ...FORWARDED };
    return { jid, content: marked, release: () => releaseOutgoingMediaContent(content) };
  }

  return {
    send_location: (command: CommandOf<'send_location'>) =>
      runSend(command, async () => {
        const { to, latitude, longitude, name, address } = command.payload;
        return {
          jid: to,
          content: {
            location: {
              degreesLatitude: latitude,
              degreesLongitude: longitude,
              ...(name ? { name } : {}),
              ...(address ? { address } : {}),
            },
          },
        };
      }),

    send_contact: (command: CommandOf<'send_contact'>) =>
      runSend(command, async () => {
        const { to, contacts } = command.payload;
        const cards = contacts.map(({ name, phone }) => ({ displayName: name, vcard: contactVcard(name, phone) }));
        const displayName = contacts.length === 1 ? contacts[0]?.name : `${contacts.length} contacts`;
        return { jid: to, content: { contacts: { ...(displayName ? { displayName } : {}), contacts: cards } } };
      }),

    send_poll: (command: CommandOf<'send_poll'>) =>
      runSend(command, async () => {
        const { to, name, options, selectableCount } = command.payload;
        return { jid: to, content: { poll: { name, values: options, selectableCount } } };
      }),

    send_sticker: (command: CommandOf<'send_sticker'>) =>
      dropUploadWhenSettled(
        deps,
        command.accountId,
        command.payload.s3Key,
        runSend(command, async () => {
          const { to, s3Key } = command.payload;
          if (!s3Key.startsWith(accountObjectPrefix(command.accountId))) throw new SendRejectedError("upload is not this account's");
          const upload = await getStream(deps.mediaStore, s3Key);
          if (!upload) throw new SendRejectedError('uploaded file not found');
          return { jid: to, content: stickerContent(await stickerWebp(upload.body)) };
        }),
      ),

    edit_message: (command: CommandOf<'edit_message'>) =>
      runSend(command, async () => {
        const { to, targetMessageId, text } = command.payload;
        const target = await storedMessage(command.accountId, targetMessageId);
        const why = whyNotEditable(target);
        if (why) throw new SendRejectedError(why);
        const key: WAMessageKey = keyOf(target);
        return { jid: key.remoteJid ?? to, content: { text, edit: key } };
      }),

    forward_message: (command: CommandOf<'forward_message'>) =>
      runSend(command, async () => {
        const { to, sourceMessageId } = command.payload;
        const source = await storedMessage(command.accountId, sourceMessageId);
        return forwardContent(command.accountId, to, source);
      }),

    mark_chat_read: (command: CommandOf<'mark_chat_read'>) =>
      runSend(command, async () => {
        const { accountId } = command;
        const chatId = command.payload.to;
        const unread = (await chatWriterOf(table).find(accountId, chatId))?.unreadCount ?? 0;
        const recent = unread > 0 ? await listMessages(table, accountId, chatId, { limit: READ_LOOKBACK, skip: 0 }) : [];
        const keys = recent
          .filter((message) => !message.fromMe)
          .slice(0, unread)
          .map(keyOf);
        return {
          action: async (sock) => {
            if (keys.length > 0) await sock.readMessages(keys);
            // An unread message that arrived meanwhile stays unread: the count goes down by these.
            if (unread > 0) await chatWriterOf(table).change(accountId, chatId, { unread: -unread });
          },
        };
      }),

    send_presence: (command: CommandOf<'send_presence'>) =>
      runSend(command, async () => {
        const { to, state } = command.payload;
        const presence = PRESENCE[state];
        return {
          action: async (sock) => {
            if (state !== 'available' && state !== 'unavailable') return sock.sendPresenceUpdate(presence, to);
            // Baileys drops it silently without the account's push name (connector/session/push-name.ts).
            if (!sock.authState.creds.me?.name) throw new SendRejectedError('the account has no push name yet');
            return sock.sendPresenceUpdate(presence);
          },
        };
      }),
  };
}
