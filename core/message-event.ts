import type { Message } from './schemas/message.js';
import { webhookEventId, type WebhookEvent } from './schemas/webhook-event.js';

/**
 * The `message` webhook event of a stored message (docs/webhooks.md): the spec's fields, then
 * those the API extensions add when the message has them (`participant`: the sender in a group,
 * `fromPn`/`fromLid`: the sender's phone-number and LID JIDs when both are known). `message` is the text, else the
 * caption, else empty (media without caption). The `eventId` is derived from the message, so a
 * redelivery or a replay sends the same X-Webhook-Id.
 */
export function messageEventFor(accountId: string, message: Message, now = Date.now()): WebhookEvent {
  return {
    eventId: webhookEventId(accountId, message.messageId),
    accountId,
    event: 'message',
    body: {
      from: message.from,
      message: message.text ?? message.caption ?? '',
      messageId: message.messageId,
      timestamp: message.timestamp,
      chatId: message.chatId,
      fromMe: message.fromMe,
      type: message.type,
      ...(message.hasMedia !== undefined ? { hasMedia: message.hasMedia } : {}),
      ...(message.mediaId !== undefined ? { mediaId: message.mediaId } : {}),
      ...(message.caption !== undefined ? { caption: message.caption } : {}),
      ...(message.quotedMessageId !== undefined ? { quotedMessageId: message.quotedMessageId } : {}),
      ...(message.participant !== undefined ? { participant: message.participant } : {}),
      ...(message.fromPn !== undefined && message.fromLid !== undefined ? { fromPn: message.fromPn, fromLid: message.fromLid } : {}),
    },
    createdAt: now,
  };
}
