import { proto } from '@whiskeysockets/baileys';

/** The one line a phone's inbox keeps about a message: what kind, and its text if any. */
export function summarize(message: proto.IMessage): { type: string; text: string | null } {
  const m = message.deviceSentMessage?.message ?? message;
  if (m.conversation) return { type: 'text', text: m.conversation };
  if (m.extendedTextMessage) return { type: 'text', text: m.extendedTextMessage.text ?? null };
  if (m.reactionMessage) return { type: 'reaction', text: m.reactionMessage.text ?? null };
  if (m.imageMessage) return { type: 'image', text: m.imageMessage.caption ?? null };
  if (m.videoMessage) return { type: 'video', text: m.videoMessage.caption ?? null };
  if (m.audioMessage) return { type: 'audio', text: null };
  if (m.documentMessage) return { type: 'document', text: m.documentMessage.caption ?? null };
  if (m.stickerMessage) return { type: 'sticker', text: null };
  if (m.protocolMessage) {
    const type = m.protocolMessage.type === proto.Message.ProtocolMessage.Type.REVOKE ? 'revoke' : 'protocol';
    return { type, text: null };
  }
  return { type: 'unknown', text: null };
}
