import type { MessageStatus } from './schemas/message.js';
import type { WebhookEvent } from './schemas/webhook-event.js';

/**
 * The order a sent message moves through (docs/api.md): a receipt only ever moves it forward.
 * `failed` (WhatsApp refused the send) comes after `pending` and `sent` only: a delivery receipt
 * after it proves the message arrived after all, and moves it on.
 */
const RANK: Record<MessageStatus, number> = { pending: 0, sent: 1, failed: 2, delivered: 3, read: 4, played: 5 };
const ORDER = Object.keys(RANK) as MessageStatus[];

/** The statuses a message may move to `status` from (the conditional write's list). */
export function statusesBefore(status: MessageStatus): MessageStatus[] {
  return ORDER.filter((candidate) => RANK[candidate] < RANK[status]);
}

/** Whether `to` is a forward move from `from` (no status yet: any). */
export function isForwardMove(from: MessageStatus | undefined, to: MessageStatus): boolean {
  return from === undefined || RANK[to] > RANK[from];
}

/** A status a sent message reached, and when (Unix ms). */
export interface StatusMove {
  status: MessageStatus;
  at: number;
}

/**
 * The `message.status` webhook event of one forward move: one per message and status, so its
 * eventId (X-Webhook-Id) is stable across redeliveries. `pending` is not an event.
 */
export function statusEventFor(accountId: string, messageId: string, chatId: string, move: StatusMove, now = Date.now()): WebhookEvent {
  return {
    eventId: `${accountId}:${messageId}:status:${move.status}`,
    accountId,
    event: 'message.status',
    body: { messageId, chatId, status: move.status, timestamp: move.at },
    createdAt: now,
  };
}

/** The moves among `moves` (in arrival order) that each go forward from `from` and the one before. */
export function forwardMoves(from: MessageStatus | undefined, moves: readonly StatusMove[]): StatusMove[] {
  const applied: StatusMove[] = [];
  let current = from;
  for (const move of moves) {
    if (!isForwardMove(current, move.status)) continue;
    applied.push(move);
    current = move.status;
  }
  return applied;
}

/**
 * The `message.status` event of a paced send that has no stored message yet
 * (docs/sending.md#paced-sends): `queued` when the connector takes it into the account's queue,
 * `failed` with `error` when it fails before WhatsApp has it. Same ids as the other moves, so a
 * repeat is one event.
 */
export function queuedSendEventFor(
  accountId: string,
  send: { messageId: string; chatId: string },
  move: { status: 'queued' } | { status: 'failed'; error: string },
  now = Date.now(),
): WebhookEvent {
  return {
    eventId: `${accountId}:${send.messageId}:status:${move.status}`,
    accountId,
    event: 'message.status',
    body: {
      messageId: send.messageId,
      chatId: send.chatId,
      status: move.status,
      timestamp: now,
      ...('error' in move ? { error: move.error } : {}),
    },
    createdAt: now,
  };
}
