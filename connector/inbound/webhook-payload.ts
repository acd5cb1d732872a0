import type { Message } from '../../core/schemas/message.js';
import { webhookEventId, type WebhookEvent } from '../../core/schemas/webhook-event.js';

/**
 * The queued webhook event of a stored message: exactly the fields of docs/webhooks.md. `message`
 * is the text, else the caption, else empty (media without caption); the stable `eventId`
 * becomes the X-Webhook-Id header.
 */
export function webhookEventFor(accountId: string, message: Message): WebhookEvent {
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
    },
    createdAt: Date.now(),
  };
}
