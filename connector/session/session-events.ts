import type { Logger } from '../../core/logger.js';
import type { AccountStatus, StatusReason } from '../../core/schemas/account.js';
import type { SendPauseReason } from '../../core/send-pause.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';
import type { EventPublisher } from '../inbound/event-publisher.js';

interface StatusChange {
  status: AccountStatus;
  previousStatus: AccountStatus;
  reason: StatusReason;
  /** Unix ms. */
  timestamp: number;
}

interface QrShown {
  qr: string;
  /** Unix ms: when the QR stops being scannable. */
  expiresAt: number;
  timestamp: number;
}

/** A call to the account (docs/webhooks.md, `call`): offered, declined by the gateway, or ended unanswered. */
export interface CallReport {
  callId: string;
  /** The caller's JID (its phone-number JID when WhatsApp gives it). */
  from: string;
  isVideo: boolean;
  status: 'offer' | 'rejected' | 'missed';
  /** Unix ms. */
  timestamp: number;
}

/** One imported chunk of the phone's history (connector/history/). */
interface HistoryImported {
  /** The id of the phone's notification of the chunk: the event's id, the same if imported again. */
  notificationId: string;
  syncType: 'bootstrap' | 'recent' | 'full' | 'on_demand';
  progress: number;
  chats: number;
  messages: number;
  timestamp: number;
}

interface SendPaused {
  reason: SendPauseReason;
  /** Unix ms: sending resumes by itself then. */
  until: number;
  timestamp: number;
}

/**
 * The `session.status`, `qr`, `call`, `account.limit` and `history.sync` webhook events (docs/webhooks.md).
 * Published without waiting (straight delivery: connector/webhooks/straight-delivery.ts): a
 * failed publish is logged and costs that event only, never the session that emitted it.
 * Nothing holds these events across a crash (docs/guarantees.md covers message events).
 */
export interface SessionEvents {
  status(accountId: string, change: StatusChange): void;
  qr(accountId: string, shown: QrShown): void;
  call(accountId: string, report: CallReport): void;
  /** The account's sending paused after WhatsApp refused a send (connector/commands/send-pauses.ts). */
  limit(accountId: string, paused: SendPaused): void;
  /** A history chunk was imported. */
  history(accountId: string, imported: HistoryImported): void;
}

type SessionEventName = 'session.status' | 'qr' | 'call' | 'account.limit' | 'history.sync';
const ID_KIND: Record<SessionEventName, string> = {
  'session.status': 'session',
  qr: 'qr',
  call: 'call',
  'account.limit': 'limit',
  'history.sync': 'history',
};

export function sessionEvents(events: EventPublisher, logger: Logger): SessionEvents {
  // With the timestamp, tells apart the events of one account within one millisecond.
  let sequence = 0;
  const enqueue = (
    accountId: string,
    event: SessionEventName,
    body: StatusChange | QrShown | CallReport | SendPaused | Omit<HistoryImported, 'notificationId'>,
    stableId?: string,
  ) => {
    sequence += 1;
    const kind = ID_KIND[event];
    // A call's events are one per call and status: the same id if the same report comes twice.
    const eventId =
      stableId !== undefined
        ? `${accountId}:${kind}:${stableId}`
        : 'callId' in body
          ? `${accountId}:${kind}:${body.callId}:${body.status}`
          : `${accountId}:${kind}:${body.timestamp}:${sequence}`;
    const queued: WebhookEvent = {
      eventId,
      accountId,
      event,
      body: { ...body },
      createdAt: body.timestamp,
    };
    events.publish(queued).catch((error: unknown) => logger.error({ err: error, accountId, event }, 'publishing the event failed'));
  };
  return {
    status: (accountId, change) => enqueue(accountId, 'session.status', change),
    qr: (accountId, shown) => enqueue(accountId, 'qr', shown),
    call: (accountId, report) => enqueue(accountId, 'call', report),
    limit: (accountId, paused) => enqueue(accountId, 'account.limit', paused),
    history: (accountId, { notificationId, ...imported }) => enqueue(accountId, 'history.sync', imported, notificationId),
  };
}
