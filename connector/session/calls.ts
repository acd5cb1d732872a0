import { jidNormalizedUser, type WACallEvent, type WASocket } from '@whiskeysockets/baileys';
import { BoundedCache } from '../../core/bounded-cache.js';
import type { Logger } from '../../core/logger.js';
import type { AccountSettings } from '../../core/schemas/settings.js';
import { SerialQueue } from '../../core/serial.js';
import type { CallReport, SessionEvents } from './session-events.js';

export interface CallTargets {
  accountId: string;
  log: Logger;
  events: SessionEvents;
  /** The account's settings now (`rejectCalls`, `callRejectMessage`): a change applies to the next call. */
  settings(): AccountSettings;
  /** Whether the account's sending is paused after WhatsApp refused a send (connector/commands/send-pauses.ts). */
  sendingPaused(): boolean;
}

/** Calls of one session are remembered this long: a call rings for a minute at most. */
const CALL_MEMORY_MS = 10 * 60_000;
const CALL_MEMORY_ENTRIES = 1_000;

/**
 * Incoming calls (Baileys' `call` event, Socket/messages-recv.js `handleCall`). An offer is
 * declined at once when `rejectCalls` is on (`sock.rejectCall`, WhatsApp's `<reject>` to the
 * caller), reported `rejected`, and the caller gets `callRejectMessage` when there is one;
 * otherwise it is reported `offer`, and `missed` when it ends (`terminate`, `timeout`) without
 * having been answered or declined on another device (`accept`, `reject`). Calls are handled one
 * after the other, so a call's end is never reported before its offer.
 */
export function callHandler(targets: CallTargets): (sock: WASocket, calls: readonly WACallEvent[]) => void {
  const queue = new SerialQueue();
  /** Offers reported and not ended yet, by call id. */
  const ringing = new BoundedCache<string, Pick<CallReport, 'from' | 'isVideo'>>('ringing-calls', CALL_MEMORY_ENTRIES, CALL_MEMORY_MS);

  const report = (call: WACallEvent, from: string, isVideo: boolean, status: CallReport['status']) =>
    targets.events.call(targets.accountId, { callId: call.id, from, isVideo, status, timestamp: Date.now() });

  async function offered(sock: WASocket, call: WACallEvent): Promise<void> {
    const from = jidNormalizedUser(call.callerPn ?? call.from);
    const isVideo = call.isVideo ?? false;
    const { rejectCalls, callRejectMessage } = targets.settings();
    if (!rejectCalls) {
      ringing.set(call.id, { from, isVideo });
      report(call, from, isVideo, 'offer');
      return;
    }
    try {
      await sock.rejectCall(call.id, call.from);
    } catch (error) {
      // Not declined: it rings on the phone, and is reported as it would be without the setting.
      targets.log.warn({ err: error, callId: call.id }, 'declining a call failed');
      ringing.set(call.id, { from, isVideo });
      report(call, from, isVideo, 'offer');
      return;
    }
    targets.log.info({ callId: call.id, isVideo }, 'call declined (rejectCalls)');
    report(call, from, isVideo, 'rejected');
    if (callRejectMessage === undefined) return;
    // A pause holds every send of the account (docs/sending.md): one more message to a new
    // contact is what WhatsApp's reach-out limit counts. The call is still declined.
    if (targets.sendingPaused()) {
      targets.log.info({ callId: call.id }, 'call-reject message not sent: sending paused');
      return;
    }
    // Stored like any message the account sends from its phone (Baileys' echo of it); its text is not logged.
    await sock.sendMessage(from, { text: callRejectMessage }).then(
      () => targets.log.info({ callId: call.id }, 'call-reject message sent'),
      (error: unknown) => targets.log.warn({ err: error, callId: call.id }, 'sending the call-reject message failed'),
    );
  }

  function ended(call: WACallEvent, missed: boolean): void {
    const offer = ringing.get(call.id);
    if (!offer) return;
    ringing.delete(call.id);
    if (missed) report(call, offer.from, offer.isVideo, 'missed');
  }

  return (sock, calls) => {
    for (const call of calls) {
      void queue
        .run(async () => {
          switch (call.status) {
            case 'offer':
              return offered(sock, call);
            case 'timeout':
            case 'terminate':
              return ended(call, true);
            case 'accept':
            case 'reject':
              return ended(call, false);
            default:
              return;
          }
        })
        .catch((error: unknown) => targets.log.error({ err: error, callId: call.id }, 'handling a call failed'));
    }
  };
}
