import type { Message } from './schemas/message.js';

/** WhatsApp lets a sender edit a message for 15 minutes after sending it. */
const EDIT_WINDOW_MS = 15 * 60_000;

/** Why a stored message cannot be edited now, or undefined when it can. */
export function whyNotEditable(message: Message, now = Date.now()): string | undefined {
  if (!message.fromMe) return 'only messages sent by this account can be edited';
  if (message.type !== 'text') return 'only text messages can be edited';
  if (message.revoked) return 'the message was deleted';
  if (now - message.timestamp > EDIT_WINDOW_MS) return 'messages can be edited only within 15 minutes of sending';
  return undefined;
}
