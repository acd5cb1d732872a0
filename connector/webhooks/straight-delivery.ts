/**
 * Straight delivery: an event's first attempt, made by the connector that stored it, at once,
 * without the webhook queue (docs/webhooks.md, Delivery; docs/design.md). The queue carries
 * only what this could not finish:
 *
 *   publish(event) ─► registrations (cached) ─► none selects it: done, nothing queued
 *        │                                   └► all circuits open, stopping, or too many in
 *        │                                      flight: queued as it is (the worker's first attempt)
 *        └► POST / put to each selected target ─► all served: done (log entries in no hurry)
 *                                                └► some failed: log, DLQ for the given-up pairs,
 *                                                   retry queued with `attempted: 1` ─► done
 *        (waitMs passed with targets still out: a copy queued with `attempted: 1`, delayed past
 *         their time limit ─► done; what they answer still goes to the log, which the copy reads)
 *
 * `publish` resolves once the event no longer needs its holder (the write-ahead record, the
 * row's eventPending mark, the outbox item: docs/guarantees.md): served, or its retry in the
 * queue. A caller that holds the event releases the hold only then (the inbound handling does not
 * wait for it: connector/inbound/inbox.ts `holdUntil`, event-outbox.ts `doneWhen`); a crash
 * before leaves the hold, and the replay publishes the event again under its id. A slow receiver
 * holds an event for `waitMs` at most, and at most `maxInFlight` events wait on receivers at
 * once: beyond, events go to the queue untried.
 *
 * Headers, ids, signatures, the deliveries log, circuits and dead-lettering are the worker's own
 * (delivery-worker.ts passes its parts in), so an event reads the same whichever path it took.
 */
import type { Logger } from '../../core/logger.js';
import type { Queues } from '../../core/queues.js';
import type { WebhookRegistration } from '../../core/schemas/webhook.js';
import { webhookBody, type WebhookEvent } from '../../core/schemas/webhook-event.js';
import type { DeliveryStatus } from '../../core/store/webhook-deliveries.js';
import { retryDelaySeconds } from './backoff.js';
import type { Admission, CircuitChange } from './circuit.js';
import { targetsOf } from './delivery-pairs.js';
import type { PostOutcome } from './post.js';
import type { SharedCircuits } from './shared-circuits.js';
import { targetForLogs } from './targets/dispatch.js';

/** What the worker lends: its registrations, circuits, senders, log and dead-letter queue. */
export interface StraightParts {
  registrations: {
    all(): Promise<WebhookRegistration[]>;
    asOf(queuedAt: number): Promise<WebhookRegistration[]>;
  };
  circuits: Pick<SharedCircuits, 'admit' | 'record'>;
  queues: Pick<Queues, 'sendWebhookEvent'>;
  post(registration: WebhookRegistration, event: WebhookEvent, rawBody: string, attempt: number): Promise<PostOutcome>;
  record(
    event: WebhookEvent,
    webhookId: string,
    status: DeliveryStatus,
    attempts: number,
    options?: { lastError?: string | undefined; inNoHurry?: boolean },
  ): Promise<void>;
  onCircuitChange(url: string, change: CircuitChange): void;
  deadLetter(event: WebhookEvent, webhookId: string, attempts: number, lastError: string): Promise<void>;
  log: Logger;
  maxAttempts: number;
  retryBaseMs: number;
  /** A POST's time limit (WEBHOOK_TIMEOUT_MS): a copy queued while one is out waits past it. */
  timeoutMs: number;
  /** How long a publisher waits for the first attempt before its retry is queued (WEBHOOK_STRAIGHT_WAIT_MS). */
  waitMs: number;
  /** Events whose first attempt is out at once; beyond, events are queued untried. */
  maxInFlight: number;
}

export interface StraightDelivery {
  /** Resolves once the event is served or queued (or no registration selects it); rejects when neither happened. */
  publish(event: WebhookEvent): Promise<void>;
  /** New events are queued untried; first attempts out get `drainMs`, then their copies are queued. */
  stop(drainMs: number): Promise<void>;
  /** First attempts out now (metrics, tests). */
  inFlight(): number;
}

/** SQS's longest DelaySeconds. */
const MAX_DELAY_SECONDS = 900;
/** A copy queued while a POST is out waits past that POST's time limit and its log entry by this much. */
const COPY_MARGIN_SECONDS = 5;

interface Attempt {
  /** Queues the copy (once); resolves when it is in the queue. */
  handOff(): Promise<void>;
  /** Settles when the attempt and its bookkeeping are over. */
  done: Promise<void>;
}

export function straightDelivery(parts: StraightParts): StraightDelivery {
  const { log } = parts;
  const out = new Set<Attempt>();
  let stopping = false;

  const queueUntried = (event: WebhookEvent) => parts.queues.sendWebhookEvent(event);

  async function targetsFor(event: WebhookEvent): Promise<WebhookRegistration[]> {
    const targets = targetsOf(event, await parts.registrations.all());
    // As in the worker: the cached list may predate a registration made just before the event.
    if (targets.length > 0 || event.createdAt === undefined) return targets;
    return targetsOf(event, await parts.registrations.asOf(event.createdAt));
  }

  /**
   * The first attempt at every target not parked. `handedOff()` says whether the publisher was
   * already let go with a copy in the queue: a failure then only goes to the log, for the copy.
   */
  async function attempt(
    event: WebhookEvent,
    pending: Array<{ registration: WebhookRegistration; admission: Admission }>,
    handedOff: () => boolean,
  ): Promise<void> {
    const rawBody = JSON.stringify(webhookBody(event));
    const outcomes = await Promise.all(
      pending.map(async (p) => {
        if (p.admission === 'park') return { ...p, outcome: { ok: false, reason: 'receiver failing (circuit open)' } as PostOutcome };
        const outcome = await parts.post(p.registration, event, rawBody, 1);
        parts.onCircuitChange(p.registration.url, await parts.circuits.record(p.registration.url, outcome.ok, p.admission));
        return { ...p, outcome };
      }),
    );
    const failed = outcomes.flatMap((o) =>
      o.outcome.ok ? [] : [{ ...o, reason: o.outcome.reason, permanent: o.outcome.permanent === true }],
    );
    if (failed.length === 0) {
      for (const o of outcomes) {
        parts
          .record(event, o.registration.webhookId, 'delivered', 1, { inNoHurry: true })
          .catch((error: unknown) =>
            log.warn({ err: error, eventId: event.eventId, webhookId: o.registration.webhookId }, 'recording a webhook delivery failed'),
          );
      }
      return;
    }
    const givenUp = failed.filter((f) => f.permanent || parts.maxAttempts <= 1);
    // Stored before the retry can come, so that it skips the pairs served (or given up) now.
    await Promise.all(
      outcomes.map((o) => {
        const status: DeliveryStatus = o.outcome.ok ? 'delivered' : givenUp.includes(o as (typeof givenUp)[number]) ? 'failed' : 'pending';
        return parts.record(event, o.registration.webhookId, status, 1, { lastError: o.outcome.ok ? undefined : o.outcome.reason });
      }),
    );
    await Promise.all(
      givenUp.map((g) => parts.deadLetter(event, g.registration.webhookId, 1, `${targetForLogs(g.registration.url)}: ${g.reason}`)),
    );
    const retried = failed.filter((f) => !givenUp.includes(f));
    const summary = failed.map((f) => `${f.registration.webhookId} ${targetForLogs(f.registration.url)}: ${f.reason}`).join('; ');
    if (retried.length === 0) {
      log.error(
        { eventId: event.eventId, failures: summary },
        'webhook delivery given up; the event moved to the dead-letter queue for these webhooks',
      );
      return;
    }
    if (handedOff()) {
      log.warn({ eventId: event.eventId, failures: summary }, 'webhook delivery failed; its queued copy retries it');
      return;
    }
    // A parked pair's event comes back at once, for the worker to park it with a handle it can
    // release when the circuit closes (parked-events.ts); failed ones after the first backoff.
    const delaySeconds = retried.some((r) => r.admission === 'park')
      ? 0
      : Math.min(MAX_DELAY_SECONDS, retryDelaySeconds(1, parts.retryBaseMs));
    await parts.queues.sendWebhookEvent({ ...event, attempted: 1 }, delaySeconds);
    log.warn({ eventId: event.eventId, failures: summary, retryInSeconds: delaySeconds }, 'webhook delivery failed; will retry');
  }

  function start(event: WebhookEvent, pending: Array<{ registration: WebhookRegistration; admission: Admission }>): Attempt {
    let copy: Promise<void> | undefined;
    const handOff = () => {
      // Past the time limit of the POSTs out, and the log entries they leave: the copy reads them.
      copy ??= parts.queues.sendWebhookEvent(
        { ...event, attempted: 1 },
        Math.min(MAX_DELAY_SECONDS, Math.ceil(parts.timeoutMs / 1000) + COPY_MARGIN_SECONDS),
      );
      return copy;
    };
    const entry: Attempt = { handOff, done: attempt(event, pending, () => copy !== undefined) };
    out.add(entry);
    void entry.done.catch(() => undefined).finally(() => out.delete(entry));
    return entry;
  }

  return {
    async publish(event) {
      const targets = await targetsFor(event);
      if (targets.length === 0) {
        log.debug({ eventId: event.eventId }, 'no webhook selects the event; not queued');
        return;
      }
      if (stopping || out.size >= parts.maxInFlight) {
        await queueUntried(event);
        return;
      }
      // A closed circuit answers without a request: only a due probe asks the shared one.
      const pending = await Promise.all(
        targets.map(async (registration) => ({ registration, admission: await parts.circuits.admit(registration.url) })),
      );
      if (pending.every((p) => p.admission === 'park')) {
        await queueUntried(event);
        return;
      }
      const entry = start(event, pending);
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<'waited'>((resolve) => {
        timer = setTimeout(() => resolve('waited'), parts.waitMs);
      });
      try {
        if ((await Promise.race([entry.done.then(() => 'done' as const), waited])) === 'done') return;
      } catch (error) {
        // Its failure was not queued: still held by the caller, whose replay publishes it again.
        if (
          !(await entry.handOff().then(
            () => true,
            () => false,
          ))
        )
          throw error;
        log.warn({ err: error, eventId: event.eventId }, 'straight delivery failed; a copy is queued');
        return;
      } finally {
        clearTimeout(timer);
      }
      await entry.handOff();
      entry.done.catch((error: unknown) =>
        log.error({ err: error, eventId: event.eventId }, 'straight delivery failed after its copy was queued'),
      );
    },
    async stop(drainMs) {
      stopping = true;
      const all = Promise.allSettled([...out].map((entry) => entry.done));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, drainMs)))]);
      clearTimeout(timer);
      // A POST still out may yet succeed: its copy then finds it delivered in the log, or the
      // receiver sees it twice under the same id.
      await Promise.allSettled([...out].map((entry) => entry.handOff()));
    },
    inFlight: () => out.size,
  };
}
