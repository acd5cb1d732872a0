import { randomBytes } from 'node:crypto';
import { aesDecryptGCM, aesEncryptGCM, hkdf, normalizeMessageContent, proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { Network } from '../network/network.js';
import type { Account, PhoneHistoryMessage } from '../network/model.js';
import { pnJid } from '../network/jids.js';
import { child } from '../handlers/context.js';

type MediaContent = { mediaKey?: Uint8Array | null; directPath?: string | null; url?: string | null };

/** The media part of a kept message (image, video, audio, document, sticker), if any. */
function mediaOf(message: proto.IMessage): MediaContent | undefined {
  const content = normalizeMessageContent(message);
  return (
    content?.imageMessage ??
    content?.videoMessage ??
    content?.audioMessage ??
    content?.documentMessage ??
    content?.stickerMessage ??
    undefined
  );
}

/** A message the phone keeps, by id, in any chat (a control-API lookup, not on a message path). */
function findKept(account: Account, messageId: string): { chat: string; kept: PhoneHistoryMessage } | undefined {
  for (const chat of account.phoneIdentity.chats.values()) {
    const kept = chat.messages.find((m) => m.id === messageId);
    if (kept) return { chat: chat.jid, kept };
  }
  return undefined;
}

/** The media host forgets a kept message's file (POST /phones/:phone/media/expire); false when it has none. */
export async function expireKeptMedia(network: Network, account: Account, messageId: string, phoneKeeps: boolean): Promise<boolean> {
  const found = findKept(account, messageId);
  const media = found ? mediaOf(proto.Message.decode(found.kept.content)) : undefined;
  if (!media?.directPath || !network.media) return false;
  return network.media.expire(media.directPath, phoneKeeps);
}

const retryKey = async (mediaKey: Uint8Array) => hkdf(mediaKey, 32, { info: 'WhatsApp Media Retry Notification' });

/**
 * A companion asks its phone to upload a message's media again (Baileys `updateMediaMessage`: a
 * `server-error` receipt with the message key in `rmr` and a ServerErrorReceipt encrypted under
 * a key from the media key). The phone checks the request, uploads the file again when it still
 * has it, and answers with a `mediaretry` notification carrying a MediaRetryNotification
 * encrypted the same way: the new `directPath` (SUCCESS), or NOT_FOUND / DECRYPTION_ERROR
 * (Utils/messages-media.js `decodeMediaRetryNode`).
 */
export async function answerMediaRetry(network: Network, account: Account, device: number, receipt: BinaryNode): Promise<void> {
  const id = receipt.attrs.id;
  const rmr = child(receipt, 'rmr');
  if (!id || !rmr) return;
  const kept = account.phoneIdentity.chats.get(rmr.attrs.jid ?? '')?.messages.find((m) => m.id === id);
  const message = kept ? proto.Message.decode(kept.content) : undefined;
  const media = message ? mediaOf(message) : undefined;
  const answer = (content: BinaryNode[]) =>
    network.deliver(account, device, {
      tag: 'notification',
      attrs: { from: pnJid(account.phone), type: 'mediaretry', id, t: String(Math.floor(Date.now() / 1000)) },
      content: [{ tag: 'rmr', attrs: { ...rmr.attrs } }, ...content],
    });
  if (!kept || !message || !media?.mediaKey) {
    answer([{ tag: 'error', attrs: { code: String(proto.MediaRetryNotification.ResultType.NOT_FOUND) } }]);
    return;
  }
  const key = await retryKey(media.mediaKey);
  const encrypt = child(receipt, 'encrypt');
  const asked = child(encrypt, 'enc_p')?.content;
  const askedIv = child(encrypt, 'enc_iv')?.content;
  let result = proto.MediaRetryNotification.ResultType.DECRYPTION_ERROR;
  let directPath: string | undefined;
  if (asked instanceof Uint8Array && askedIv instanceof Uint8Array) {
    try {
      const request = proto.ServerErrorReceipt.decode(aesDecryptGCM(asked, key, askedIv, Buffer.from(id)));
      result = proto.MediaRetryNotification.ResultType.NOT_FOUND;
      const uploaded = request.stanzaId === id && media.directPath ? await network.media?.reupload(media.directPath) : undefined;
      if (uploaded) {
        result = proto.MediaRetryNotification.ResultType.SUCCESS;
        directPath = uploaded.directPath;
        media.directPath = uploaded.directPath;
        media.url = uploaded.url;
        kept.content = Buffer.from(proto.Message.encode(message).finish());
        network.changed();
      }
    } catch {
      result = proto.MediaRetryNotification.ResultType.DECRYPTION_ERROR;
    }
  }
  const iv = randomBytes(12);
  const notification = proto.MediaRetryNotification.encode({ stanzaId: id, result, ...(directPath ? { directPath } : {}) }).finish();
  answer([
    {
      tag: 'encrypt',
      attrs: {},
      content: [
        { tag: 'enc_p', attrs: {}, content: aesEncryptGCM(notification, key, iv, Buffer.from(id)) },
        { tag: 'enc_iv', attrs: {}, content: iv },
      ],
    },
  ]);
}
