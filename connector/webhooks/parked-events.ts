import type { Received } from '../../core/queues.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';

/**
 * Events waiting in SQS for their next attempt (a failed POST or a parked one), with the receipt
 * handles this process holds, by target. The events stay in the queue, invisible for their
 * backoff; holding the handle lets the worker make them visible at once when the target answers
 * again (or when the process stops), and lend one to the circuit as its probe. A handle is kept
 * only until its visibility ends: then SQS hands the event out again and a new handle replaces it.
 */
interface Held {
  received: Received<WebhookEvent>;
  visibleAt: number;
}

/** Bound on the handles kept per target; beyond it events simply wait for their own backoff. */
const MAX_HELD_PER_TARGET = 10_000;

export class ParkedEvents {
  private readonly byTarget = new Map<string, Map<string, Held>>();

  hold(target: string, received: Received<WebhookEvent>, invisibleForSeconds: number, now = Date.now()): void {
    const held = this.byTarget.get(target) ?? new Map<string, Held>();
    this.byTarget.set(target, held);
    if (held.size >= MAX_HELD_PER_TARGET && !held.has(received.sqsMessageId)) this.prune(held, now);
    if (held.size >= MAX_HELD_PER_TARGET && !held.has(received.sqsMessageId)) return;
    held.set(received.sqsMessageId, { received, visibleAt: now + invisibleForSeconds * 1000 });
  }

  /** A held event that stays invisible for at least `forMs` more: the probe POSTs it. */
  probeCandidate(target: string, forMs: number, now = Date.now()): Received<WebhookEvent> | undefined {
    const held = this.byTarget.get(target);
    if (!held) return undefined;
    this.prune(held, now);
    for (const entry of held.values()) if (entry.visibleAt - now >= forMs) return entry.received;
    return undefined;
  }

  /** Removes and answers the still-valid handles held for `target` (and drops those events under every target). */
  take(target: string, now = Date.now()): string[] {
    const held = this.byTarget.get(target);
    if (!held) return [];
    this.byTarget.delete(target);
    this.prune(held, now);
    for (const messageId of held.keys()) for (const other of this.byTarget.values()) other.delete(messageId);
    return [...held.values()].map((entry) => entry.received.receiptHandle);
  }

  /** Removes and answers every still-valid handle (shutdown). */
  takeAll(now = Date.now()): string[] {
    const handles = new Map<string, string>();
    for (const held of this.byTarget.values()) {
      this.prune(held, now);
      for (const [messageId, entry] of held) handles.set(messageId, entry.received.receiptHandle);
    }
    this.byTarget.clear();
    return [...handles.values()];
  }

  /** Handles whose visibility ends within a second are left alone: SQS hands those out anyway. */
  private prune(held: Map<string, Held>, now: number): void {
    for (const [messageId, entry] of held) if (entry.visibleAt - now < 1_000) held.delete(messageId);
  }
}
