import { randomBytes, randomUUID } from 'node:crypto';

/** A message id in the style WhatsApp Web clients use (Baileys' generateMessageID shape). */
export function newMessageId(): string {
  return `3EB0${randomBytes(18).toString('hex').toUpperCase()}`;
}

/** Identifies one command; the FIFO queue deduplicates on it. */
export function newCommandId(): string {
  return randomUUID();
}

export function newUploadId(): string {
  return randomBytes(16).toString('hex');
}

export function newRequestId(): string {
  return randomUUID();
}
