/**
 * Webhook delivery: the consumer of the webhook event queue.
 *
 *   const delivery = startWebhookDelivery({ config, clients, logger });
 *   ...
 *   await delivery.stop();   // SIGTERM: stop receiving, finish in-flight POSTs (bounded), resolve
 *
 * Each event is POSTed (post.ts) to every registered URL not yet served, in parallel. When
 * every URL is served the SQS message is deleted (no DynamoDB access on this happy path).
 * Otherwise the URLs that answered 2xx are recorded in DynamoDB
 * (core/store/webhook-deliveries.ts), so the retry only goes to the URLs that failed, and the
 * message's visibility is set to the next backoff (backoff.ts): SQS hands it back then. The
 * attempt number is the SQS receive count. After WEBHOOK_MAX_ATTEMPTS attempts (4xx included:
 * a receiver may be fixed) the event moves to the DLQ.
 *
 * A URL that keeps failing opens its circuit (circuit.ts): its events are parked instead of
 * POSTed (they keep their own retry schedule and count attempts), and one probe at a time
 * tests the URL. Every event waiting for a URL is held (parked-events.ts); the first 2xx of an
 * open URL makes them all visible again at once, so the backlog follows within seconds.
 * With no URL registered an event is dropped. Delivery is at least once: a receiver drops
 * duplicates by the stable X-Webhook-Id.
 */
import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { createQueues, type Queues, type Received } from '../../core/queues.js';
import { webhookSelects } from '../../core/schemas/webhook.js';
import { webhookBody, type WebhookEvent } from '../../core/schemas/webhook-event.js';
import { tableOf } from '../../core/store/table.js';
import { findDeliveredUrls, recordDeliveredUrls } from '../../core/store/webhook-deliveries.js';
import { withTimeout } from '../../core/with-timeout.js';
import { minimumRetrySpanSeconds, retryDelaySeconds } from './backoff.js';
import { Circuits, type CircuitChange } from './circuit.js';
import { resolveDeadLetterTarget, sendToDeadLetter, type DeadLetterTarget } from './dead-letter.js';
import { ParkedEvents } from './parked-events.js';
import { postWebhook, urlForLogs } from './post.js';
import { createRegistrationCache } from './registrations.js';

export interface WebhookDeliveryDeps {
  config: Config;
  clients: AwsClients;
  logger: Logger;
  /** Defaults to the queues of `config`. */
  queues?: Queues;
  /** How long a registration list is reused (default 5 s). */
  registrationCacheMs?: number;
  /** How long stop() lets POSTs in flight finish (default 5 s). */
  drainMs?: number;
}

export interface WebhookDelivery {
  /** Stops receiving, lets in-flight deliveries finish (bounded), hands the rest back, resolves. */
  stop(): Promise<void>;
}

/** Events handled at once; more wait in the queue. */
const MAX_IN_FLIGHT = 50;
/**
 * Receive long-poll seconds. Short, because a receive is never aborted: SQS (and fauxqs) may
 * still hand an event to an abandoned request, hiding it for its visibility timeout. Stop
 * waits for the receive out instead, at most this long.
 */
const RECEIVE_WAIT_SECONDS = 2;
/** Pause after a failed receive (queue unreachable) before polling again. */
const RECEIVE_ERROR_PAUSE_MS = 2_000;
/** How often open circuits are checked for a due probe. */
const PROBE_CHECK_MS = 500;
const DEFAULT_DRAIN_MS = 5_000;
/** Visibility of an event handed back or released: as good as 0 (see core/queues.ts). */
const RELEASE_SECONDS = 1;

export function startWebhookDelivery(deps: WebhookDeliveryDeps): WebhookDelivery {
  const { config, logger } = deps;
  const log = logger.child({ component: 'webhook-delivery' });
  const table = tableOf(config, deps.clients);
  const queues = deps.queues ?? createQueues(config, deps.clients, logger);
  const registrations = createRegistrationCache(table, deps.registrationCacheMs);
  const maxAttempts = config.WEBHOOK_MAX_ATTEMPTS;
  // Long enough for the parallel POSTs of one event plus the bookkeeping around them.
  const visibilitySeconds = Math.ceil(config.WEBHOOK_TIMEOUT_MS / 1000) + 30;
  const circuits = new Circuits({
    failureThreshold: config.WEBHOOK_CIRCUIT_FAILURES,
    probeBaseMs: config.WEBHOOK_PROBE_BASE_MS,
    probeMaxMs: config.WEBHOOK_PROBE_MAX_MS,
  });
  const parked = new ParkedEvents();

  let stopping = false;
  let wakeLoop: () => void = () => undefined;
  const stopRequested = new Promise<void>((resolve) => (wakeLoop = resolve));
  /** Deliveries and probes under way, with the event each works on. */
  const inFlight = new Map<Promise<void>, Received<WebhookEvent> | undefined>();
  let deadLetter: Promise<DeadLetterTarget> | undefined;

  const deadLetterTarget = () => {
    deadLetter ??= (async () => {
      const target = await resolveDeadLetterTarget(deps.clients.sqs, await queues.webhookQueueUrl(), config.WEBHOOK_DLQ_NAME);
      if (target.maxReceiveCount !== undefined && target.maxReceiveCount < maxAttempts) {
        log.warn(
          { maxReceiveCount: target.maxReceiveCount, maxAttempts },
          'webhook queue redrive limit is below WEBHOOK_MAX_ATTEMPTS: SQS moves events to the DLQ earlier',
        );
      }
      return target;
    })().catch((error: unknown) => {
      deadLetter = undefined;
      throw error;
    });
    return deadLetter;
  };

  /** Makes events visible again at once (their circuit closed, or this worker stops). */
  async function release(handles: string[], why: string): Promise<void> {
    if (handles.length === 0) return;
    try {
      const refused = await queues.changeWebhookVisibilities(handles, RELEASE_SECONDS);
      log.info({ events: handles.length, refused: refused.length, why }, 'held webhook events released');
    } catch (error) {
      log.error({ err: error, why }, 'releasing held webhook events failed; they come back on their own schedule');
    }
  }

  /** Acts on a circuit change: a receiver that answers again gets its held events at once. */
  function onCircuitChange(url: string, change: CircuitChange): void {
    if (change === 'opened') {
      log.warn({ url: urlForLogs(url) }, 'webhook receiver keeps failing: its events are parked and one probe at a time tests it');
    } else if (change === 'closed') {
      log.info({ url: urlForLogs(url) }, 'webhook receiver answers again: releasing its parked events');
      track(release(parked.take(url), 'receiver answers again'));
    }
  }

  /** Never throws: an admitted POST always reaches `circuits.record`, or a probe would stay out forever. */
  function post(url: string, event: WebhookEvent, body: Record<string, unknown>, attempt: number) {
    return postWebhook(url, body, { eventId: event.eventId, event: event.event, attempt }, config.WEBHOOK_TIMEOUT_MS, {
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    });
  }

  async function deliver(received: Received<WebhookEvent>): Promise<void> {
    const event = received.body;
    const attempt = received.receiveCount;
    const eventLog = log.child({ accountId: event.accountId, eventId: event.eventId, attempt });
    // The URLs whose registration's scope and filter select the event (one POST per URL).
    const urls = [...new Set((await registrations.all()).filter((r) => webhookSelects(r, event.accountId, event.event)).map((r) => r.url))];
    if (urls.length === 0) {
      eventLog.debug('no webhook selects the event; dropped');
      await queues.ackWebhookEvent(received.receiptHandle);
      return;
    }
    // Only a retry can have URLs already served: the first attempt needs no read.
    const delivered = attempt > 1 ? await findDeliveredUrls(table, event.eventId) : new Set<string>();
    // Exactly the fields of docs/webhooks.md, whatever else a future event might carry.
    const payload = webhookBody(event);
    const pending = urls.filter((url) => !delivered.has(url)).map((url) => ({ url, admission: circuits.admit(url) }));
    const outcomes = await Promise.all(
      pending.flatMap(({ url, admission }) =>
        admission === 'park'
          ? []
          : [
              post(url, event, payload, attempt).then((outcome) => {
                onCircuitChange(url, circuits.record(url, outcome.ok, admission));
                return { url, outcome };
              }),
            ],
      ),
    );
    const failures = [
      ...outcomes.flatMap((o) => (o.outcome.ok ? [] : [{ url: o.url, reason: o.outcome.reason, permanent: o.outcome.permanent === true }])),
      ...pending
        .filter((p) => p.admission === 'park')
        .map((p) => ({ url: p.url, reason: 'receiver failing (circuit open)', permanent: false })),
    ];
    if (failures.length === 0) {
      await queues.ackWebhookEvent(received.receiptHandle);
      eventLog.debug({ urls: outcomes.length }, 'webhook event delivered');
      return;
    }
    // Remembered only when a retry will follow: then the URLs served now are skipped.
    await recordDeliveredUrls(
      table,
      event.eventId,
      outcomes.filter((o) => o.outcome.ok).map((o) => o.url),
    );
    const summary = failures.map((f) => `${urlForLogs(f.url)}: ${f.reason}`).join('; ');
    // A target refused by the address policy stays refused: no point in waiting for retries.
    if (attempt >= maxAttempts || failures.every((f) => f.permanent)) {
      await sendToDeadLetter(deps.clients.sqs, await deadLetterTarget(), event, {
        attempts: attempt,
        failedUrls: failures.map((f) => f.url),
        lastError: summary,
      });
      await queues.ackWebhookEvent(received.receiptHandle);
      eventLog.error({ failures: summary }, 'webhook delivery given up; event moved to the dead-letter queue');
      return;
    }
    const delaySeconds = retryDelaySeconds(attempt, config.WEBHOOK_RETRY_BASE_MS);
    await queues.changeWebhookVisibility(received.receiptHandle, delaySeconds);
    for (const failure of failures) parked.hold(failure.url, received, delaySeconds);
    // A probe may have closed a circuit while this event was being parked for it.
    for (const { url } of pending.filter((p) => p.admission === 'park' && !circuits.isOpen(p.url))) {
      track(release(parked.take(url), 'receiver answers again'));
    }
    if (outcomes.length > 0) eventLog.warn({ failures: summary, retryInSeconds: delaySeconds }, 'webhook delivery failed; will retry');
    else eventLog.debug({ failures: summary, retryInSeconds: delaySeconds }, 'webhook event parked');
  }

  /**
   * The probe of an open circuit: a held event is POSTed to its URL alone (the event stays
   * invisible meanwhile). Its 2xx is recorded for the event before the circuit closes, so the
   * release that follows does not POST it to that URL again.
   */
  async function probe(url: string): Promise<void> {
    const candidate = parked.probeCandidate(url, config.WEBHOOK_TIMEOUT_MS + 5_000);
    // None held: the next event received for the URL is the probe instead.
    if (!candidate) return;
    let payload: Record<string, unknown>;
    try {
      payload = webhookBody(candidate.body);
    } catch {
      return;
    }
    if (circuits.admit(url) !== 'probe') return;
    const outcome = await post(url, candidate.body, payload, candidate.receiveCount);
    if (outcome.ok) {
      // Not recorded: the release that follows POSTs it to this URL once more (at least once).
      await recordDeliveredUrls(table, candidate.body.eventId, [url]).catch((error: unknown) =>
        log.warn({ err: error, eventId: candidate.body.eventId }, 'recording the probe delivery failed'),
      );
    } else log.debug({ url: urlForLogs(url), reason: outcome.reason }, 'webhook probe failed');
    onCircuitChange(url, circuits.record(url, outcome.ok, 'probe'));
  }

  function track(work: Promise<void>, received?: Received<WebhookEvent>): void {
    const tracked = work
      .catch((error: unknown) => {
        // The message becomes visible again after its visibility timeout and is retried then.
        log.error({ err: error, eventId: received?.body.eventId }, 'webhook delivery error');
      })
      .finally(() => inFlight.delete(tracked));
    inFlight.set(tracked, received);
  }

  const probeTimer = setInterval(() => {
    if (stopping) return;
    for (const url of circuits.dueProbes()) track(probe(url));
  }, PROBE_CHECK_MS);
  probeTimer.unref();

  async function loop(): Promise<void> {
    while (!stopping) {
      if (inFlight.size >= MAX_IN_FLIGHT) {
        await Promise.race([...inFlight.keys(), stopRequested]);
        continue;
      }
      try {
        const batch = await queues.receiveWebhookEvents({
          maxMessages: Math.min(10, MAX_IN_FLIGHT - inFlight.size),
          waitSeconds: RECEIVE_WAIT_SECONDS,
          visibilityTimeoutSeconds: visibilitySeconds,
        });
        if (stopping) {
          await release(
            batch.map((r) => r.receiptHandle),
            'received while stopping',
          );
          break;
        }
        for (const received of batch) track(deliver(received), received);
      } catch (error) {
        log.error({ err: error }, 'receiving webhook events failed');
        await new Promise((resolve) => setTimeout(resolve, RECEIVE_ERROR_PAUSE_MS));
      }
    }
  }

  log.info(
    {
      maxAttempts,
      retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
      minimumRetrySpanSeconds: minimumRetrySpanSeconds(maxAttempts, config.WEBHOOK_RETRY_BASE_MS),
      circuitFailures: config.WEBHOOK_CIRCUIT_FAILURES,
      probeMaxMs: config.WEBHOOK_PROBE_MAX_MS,
    },
    'webhook delivery started',
  );
  // Resolved at start so that a redrive limit below WEBHOOK_MAX_ATTEMPTS is reported at once.
  deadLetterTarget().catch((error: unknown) => log.warn({ err: error }, 'webhook dead-letter queue not resolved yet'));
  const running = loop();

  return {
    async stop() {
      const drainUntil = Date.now() + (deps.drainMs ?? DEFAULT_DRAIN_MS);
      stopping = true;
      wakeLoop();
      clearInterval(probeTimer);
      await running;
      // Events waiting for a receiver go to the next connector now rather than after their
      // backoff: its circuits start closed, so a receiver that is up again gets them at once.
      await release(parked.takeAll(), 'connector stopping');
      if ((await withTimeout(Promise.allSettled([...inFlight.keys()]), drainUntil - Date.now())) === 'timed_out') {
        // A POST still out may yet succeed: the receiver then sees the event twice, which the
        // stable X-Webhook-Id makes harmless; waiting for it would hold the stop up.
        const unfinished = [...inFlight.values()].flatMap((r) => (r ? [r.receiptHandle] : []));
        await release(unfinished, 'still in flight at the end of the stop drain');
      }
      // Parked by deliveries that ended during the drain.
      await release(parked.takeAll(), 'connector stopping');
      log.info('webhook delivery stopped');
    },
  };
}
