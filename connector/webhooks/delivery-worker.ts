/**
 * Webhook delivery: the consumer of the webhook event queue.
 *
 *   const delivery = startWebhookDelivery({ config, clients, logger });
 *   ...
 *   await delivery.stop();   // SIGTERM: stop receiving, finish in-flight POSTs (bounded), resolve
 *
 * One queued event goes to every registration whose scope and filter select it (a replayed or
 * redriven event, which names its webhook, to that one only): one POST per (event, webhook)
 * pair, in parallel, the JSON text built once and signed per webhook with its secret
 * (signature.ts). Each pair's outcome goes to the deliveries log (core/store/webhook-deliveries.ts)
 * in batched writes. When every pair is served the SQS message is deleted, without waiting
 * for the log; both the delete and the log entries then wait up to a second for others to share
 * their requests (nothing waits for them). Otherwise the log is written before the message's
 * visibility is set to the next backoff (backoff.ts): SQS hands it back then, and the retry
 * reads the log (one BatchGet) to POST only the pairs not yet delivered, each with its own
 * attempt count. A pair that reaches WEBHOOK_MAX_ATTEMPTS (4xx included: a receiver may be
 * fixed), or whose target the address policy refuses, is given up alone: it moves to the DLQ as
 * the event naming its webhook, so a redrive goes to that webhook only. The other pairs keep
 * their retries.
 *
 * A URL that keeps failing opens its circuit (circuit.ts): its pairs are parked instead of
 * POSTed (they keep their retry schedule and count attempts), and one probe at a time tests
 * the URL. The open circuits are shared by every connector through DynamoDB
 * (shared-circuits.ts): one opened elsewhere, or before a crash, parks here too, and one
 * connector at a time probes it. Every event waiting for a URL is held (parked-events.ts); the
 * first 2xx of an open URL makes them all visible again at once, on this connector at once and
 * on the others at their next sync, so the backlog follows within seconds. With no
 * registration selecting it an event is dropped. Delivery is at least once: a receiver drops
 * duplicates by the stable X-Webhook-Id (the event's id, the same for every webhook and retry).
 *
 * A registration's target is an http(s) URL (POSTed) or an SQS queue or EventBridge bus ARN
 * (targets/dispatch.ts): each answers the same outcome, so all of the above holds for every kind.
 */
import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { lazyChild } from '../../core/lazy-child.js';
import { startPollLoop } from '../../core/poll-loop.js';
import { createQueues, type Queues, type Received } from '../../core/queues.js';
import type { WebhookRegistration } from '../../core/schemas/webhook.js';
import { webhookBody, type WebhookEvent } from '../../core/schemas/webhook-event.js';
import { tableOf } from '../../core/store/table.js';
import { createDeliveryLogWriter, findDeliveries, type Delivery, type DeliveryStatus } from '../../core/store/webhook-deliveries.js';
import { withTimeout } from '../../core/with-timeout.js';
import { minimumRetrySpanSeconds, retryDelaySeconds } from './backoff.js';
import { Circuits, type CircuitChange } from './circuit.js';
import { deadLetterTargetOnce, sendToDeadLetter } from './dead-letter.js';
import { pairOf, targetsOf } from './delivery-pairs.js';
import { ParkedEvents } from './parked-events.js';
import { probe } from './probe.js';
import { SharedCircuits } from './shared-circuits.js';
import type { PostOutcome } from './post.js';
import { createRegistrationCache } from './registrations.js';
import { eventDisposal } from './disposal.js';
import { straightDelivery } from './straight-delivery.js';
import { createTargetSenders, targetForLogs } from './targets/dispatch.js';

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
  /** Events whose straight first attempt may be out at once (default STRAIGHT_IN_FLIGHT). */
  straightInFlight?: number;
}

export interface WebhookDelivery {
  /**
   * An event just stored (or held) by this connector: its first attempt goes out now
   * (straight-delivery.ts). Resolves once it is served or its retry queued, or no registration
   * selects it; only then may its holder let it go (docs/guarantees.md).
   */
  publish(event: WebhookEvent): Promise<void>;
  /** Stops receiving, lets in-flight deliveries finish (bounded), hands the rest back, resolves. */
  stop(): Promise<void>;
}

/** Events handled at once; more wait in the queue. */
const MAX_IN_FLIGHT = 50;
/**
 * Receive long-poll seconds: the longest SQS allows. The queue carries only retries (and events
 * whose first attempt could not be made), so what costs is the polling itself: one receive per
 * 20 s and connector, where 2 s cost ten (docs/benchmarks.md, Cost). A retry that comes due
 * during the poll is handed out at once all the same.
 */
const RECEIVE_WAIT_SECONDS = 20;
/**
 * How long a stop waits for its wake-up to end the receive out before aborting it. The queue is
 * shared, so another connector's receive may take the wake-up; the abort may then hide an event
 * handed to the abandoned request for its visibility timeout, a delay of seconds on a retry.
 */
const WAKE_UP_GRACE_MS = 1_500;
/** Pause after a failed receive (queue unreachable) before polling again. */
const RECEIVE_ERROR_PAUSE_MS = 2_000;
/** How often open circuits are checked for a due probe. */
const PROBE_CHECK_MS = 500;
const DEFAULT_DRAIN_MS = 5_000;
/**
 * Events whose straight first attempt is out at once; more are queued untried. Far above what a
 * receiver answering in tens of ms needs at hundreds of messages a second.
 */
const STRAIGHT_IN_FLIGHT = 100;

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
  // A probe's claim outlasts its POST; the others look again for a close at the probe's pace.
  const shared = new SharedCircuits(
    circuits,
    table,
    {
      probeClaimMs: config.WEBHOOK_TIMEOUT_MS + 5_000,
      syncOpenMs: config.WEBHOOK_PROBE_BASE_MS,
      syncIdleMs: config.WEBHOOK_PROBE_MAX_MS,
    },
    log,
  );
  const parked = new ParkedEvents();
  const deliveryLog = createDeliveryLogWriter(table);
  const senders = createTargetSenders(config, deps.clients);

  const { acknowledge, release, acknowledged } = eventDisposal(queues, log);
  const deadLetterTarget = deadLetterTargetOnce(
    deps.clients.sqs,
    () => queues.webhookQueueUrl(),
    config.WEBHOOK_DLQ_NAME,
    maxAttempts,
    log,
  );

  /** Acts on a circuit change: a receiver that answers again gets its held events at once. */
  function onCircuitChange(url: string, change: CircuitChange): void {
    if (change === 'opened') {
      log.warn({ url: targetForLogs(url) }, 'webhook receiver keeps failing: its events are parked and one probe at a time tests it');
    } else if (change === 'closed') {
      log.info({ url: targetForLogs(url) }, 'webhook receiver answers again: releasing its parked events');
      track(release(parked.take(url), 'receiver answers again'));
    }
  }

  /** Never throws: an admitted POST always reaches `circuits.record`, or a probe would stay out forever. */
  function post(registration: WebhookRegistration, event: WebhookEvent, rawBody: string, attempt: number): Promise<PostOutcome> {
    const { eventId, accountId } = event;
    return senders.send(registration.url, { eventId, event: event.event, accountId, attempt, rawBody, secret: registration.secret });
  }

  /** Stores a pair's entry in the deliveries log (batched with the other deliveries' entries). */
  function record(
    event: WebhookEvent,
    webhookId: string,
    status: DeliveryStatus,
    attempts: number,
    { lastError, inNoHurry = false }: { lastError?: string | undefined; inNoHurry?: boolean } = {},
  ): Promise<void> {
    const delivery: Delivery = {
      eventId: event.eventId,
      event: event.event,
      status,
      attempts,
      ...(lastError === undefined ? {} : { lastError }),
      lastAttemptAt: Date.now(),
    };
    return deliveryLog.record(pairOf(event, webhookId), delivery, { inNoHurry });
  }

  async function deliver(received: Received<WebhookEvent>): Promise<void> {
    const event = received.body;
    const receiveCount = received.receiveCount;
    // Attempts so far, the straight one included (straight-delivery.ts): it counts as a receive.
    const tries = receiveCount + (event.attempted ?? 0);
    const eventLog = lazyChild(log, () => ({ accountId: event.accountId, eventId: event.eventId, receiveCount, tries }));
    let targets = targetsOf(event, await registrations.all());
    // The cached list may predate a registration made just before the event was queued (the
    // account's first webhook, or the first for this kind of event): dropped, the event would
    // be lost to it.
    if (targets.length === 0 && event.createdAt !== undefined) targets = targetsOf(event, await registrations.asOf(event.createdAt));
    if (targets.length === 0) {
      eventLog.debug('no webhook selects the event; dropped');
      acknowledge(received);
      return;
    }
    // Only a retry can have pairs already served (or given up): the first attempt needs no read.
    const stored =
      tries > 1
        ? await findDeliveries(
            table,
            targets.map((t) => pairOf(event, t.webhookId)),
          )
        : new Map<string, Delivery>();
    const pending = await Promise.all(
      targets
        .filter((t) => {
          const status = stored.get(t.webhookId)?.status;
          return status !== 'delivered' && status !== 'failed';
        })
        .map(async (registration) => ({
          registration,
          attempt: (stored.get(registration.webhookId)?.attempts ?? 0) + 1,
          // A closed circuit answers without a request: only a due probe asks the shared one.
          admission: await shared.admit(registration.url),
        })),
    );
    // The same bytes for every webhook: each signature covers exactly what is sent.
    const rawBody = JSON.stringify(webhookBody(event));
    const outcomes = await Promise.all(
      pending.map(async (p): Promise<typeof p & { outcome: PostOutcome }> => {
        if (p.admission === 'park') return { ...p, outcome: { ok: false, reason: 'receiver failing (circuit open)' } };
        const outcome = await post(p.registration, event, rawBody, p.attempt);
        onCircuitChange(p.registration.url, await shared.record(p.registration.url, outcome.ok, p.admission));
        return { ...p, outcome };
      }),
    );
    const failed = outcomes.flatMap((o) =>
      o.outcome.ok ? [] : [{ ...o, reason: o.outcome.reason, permanent: o.outcome.permanent === true }],
    );
    if (failed.length === 0) {
      acknowledge(received);
      // Not awaited (stop() flushes the writer): no retry will read these entries.
      for (const o of outcomes) {
        record(event, o.registration.webhookId, 'delivered', o.attempt, { inNoHurry: true }).catch((error: unknown) =>
          eventLog.warn({ err: error, webhookId: o.registration.webhookId }, 'recording a webhook delivery failed'),
        );
      }
      eventLog.debug({ webhooks: outcomes.length }, 'webhook event delivered');
      return;
    }
    // A target refused by the address policy stays refused: no point in waiting for retries.
    const givenUp = failed.filter((f) => f.permanent || f.attempt >= maxAttempts || tries >= maxAttempts);
    const retried = failed.filter((f) => !givenUp.includes(f));
    // Stored before the retry can come, so that it skips the pairs served (or given up) now.
    await Promise.all(
      outcomes.map((o) => {
        const status: DeliveryStatus = o.outcome.ok
          ? 'delivered'
          : givenUp.some((g) => g.registration === o.registration)
            ? 'failed'
            : 'pending';
        return record(event, o.registration.webhookId, status, o.attempt, { lastError: o.outcome.ok ? undefined : o.outcome.reason });
      }),
    );
    const summary = (list: typeof failed) =>
      list.map((f) => `${f.registration.webhookId} ${targetForLogs(f.registration.url)}: ${f.reason}`).join('; ');
    if (givenUp.length > 0) {
      const target = await deadLetterTarget();
      await Promise.all(
        givenUp.map((g) =>
          sendToDeadLetter(deps.clients.sqs, target, event, {
            webhookId: g.registration.webhookId,
            attempts: g.attempt,
            lastError: `${targetForLogs(g.registration.url)}: ${g.reason}`,
          }),
        ),
      );
      eventLog.error(
        { failures: summary(givenUp) },
        'webhook delivery given up; the event moved to the dead-letter queue for these webhooks',
      );
    }
    if (retried.length === 0) {
      acknowledge(received);
      return;
    }
    const delaySeconds = retryDelaySeconds(tries, config.WEBHOOK_RETRY_BASE_MS);
    await queues.changeWebhookVisibility(received.receiptHandle, delaySeconds);
    for (const failure of retried) parked.hold(failure.registration.url, received, delaySeconds);
    // A probe may have closed a circuit while this event was being parked for it.
    for (const { registration } of retried.filter((r) => r.admission === 'park' && !circuits.isOpen(r.registration.url))) {
      track(release(parked.take(registration.url), 'receiver answers again'));
    }
    if (retried.some((r) => r.admission !== 'park')) {
      eventLog.warn({ failures: summary(retried), retryInSeconds: delaySeconds }, 'webhook delivery failed; will retry');
    } else eventLog.debug({ failures: summary(retried), retryInSeconds: delaySeconds }, 'webhook event parked');
  }

  function logFailure(work: Promise<void>, received?: Received<WebhookEvent>): Promise<void> {
    return work.catch((error: unknown) => {
      // The message becomes visible again after its visibility timeout and is retried then.
      log.error({ err: error, eventId: received?.body.eventId }, 'webhook delivery error');
    });
  }

  /** Probes and releases take a slot beside the deliveries, and a stop waits for them too. */
  function track(work: Promise<void>): void {
    loop.track(logFailure(work));
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
  /** Acts on what a sync of the shared circuits changed here. */
  const syncCircuits = (force = false) =>
    shared.sync(Date.now(), force).then((changes) => {
      for (const [url, change] of changes) onCircuitChange(url, change);
    });
  // Before the first receive: a target known to be down (by another connector, or by this one
  // before a crash) is parked from the first event on, not POSTed until this connector's own failures open it.
  const circuitsKnown = syncCircuits(true).catch((error: unknown) =>
    log.warn({ err: error }, 'open webhook circuits not read: each opens here on its own failures until the next sync'),
  );
  // Resolved at start so that a redrive limit below WEBHOOK_MAX_ATTEMPTS is reported at once.
  deadLetterTarget().catch((error: unknown) => log.warn({ err: error }, 'webhook dead-letter queue not resolved yet'));
  const loop = startPollLoop({
    receive: async (request) => {
      await circuitsKnown;
      return queues.receiveWebhookEvents(request);
    },
    waitSeconds: RECEIVE_WAIT_SECONDS,
    visibilitySeconds,
    messagesAtOnce: MAX_IN_FLIGHT,
    handleMessage: (received) => logFailure(deliver(received), received),
    receivedWhileStopping: (batch) =>
      release(
        batch.map((r) => r.receiptHandle),
        'received while stopping',
      ),
    failed(error) {
      log.error({ err: error }, 'receiving webhook events failed');
      return 'back_off';
    },
    backOffMs: RECEIVE_ERROR_PAUSE_MS,
    wakeUp: { wakeReceivers: () => queues.wakeWebhookReceivers(), graceMs: WAKE_UP_GRACE_MS, logger: log },
  });
  const probeParts = {
    parked,
    circuits: shared,
    registrations,
    table,
    log,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    post,
    record,
    onCircuitChange,
  };
  const straight = straightDelivery({
    registrations,
    circuits: shared,
    queues,
    post,
    record,
    onCircuitChange,
    async deadLetter(event, webhookId, attempts, lastError) {
      await sendToDeadLetter(deps.clients.sqs, await deadLetterTarget(), event, { webhookId, attempts, lastError });
    },
    log,
    maxAttempts,
    retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    waitMs: config.WEBHOOK_STRAIGHT_WAIT_MS,
    maxInFlight: deps.straightInFlight ?? STRAIGHT_IN_FLIGHT,
  });
  const probeTimer = setInterval(() => {
    track(syncCircuits());
    for (const url of circuits.dueProbes()) track(probe(url, probeParts));
  }, PROBE_CHECK_MS);
  probeTimer.unref();

  return {
    async publish(event) {
      // A target known to be down is parked from the first event on, as for the worker's receives.
      await circuitsKnown;
      await straight.publish(event);
    },
    async stop() {
      const drainUntil = Date.now() + (deps.drainMs ?? DEFAULT_DRAIN_MS);
      clearInterval(probeTimer);
      await Promise.all([loop.stop(), straight.stop(Math.max(0, drainUntil - Date.now()))]);
      // Events waiting for a receiver go to the next connector now rather than after their
      // backoff: it parks them while the shared circuit is open, and releases them with the others when it closes.
      await release(parked.takeAll(), 'connector stopping');
      if ((await withTimeout(loop.workDone(), drainUntil - Date.now())) === 'timed_out') {
        // A POST still out may yet succeed: the receiver then sees the event twice, which the
        // stable X-Webhook-Id makes harmless; waiting for it would hold the stop up.
        const unfinished = loop.unfinished().map((r) => r.receiptHandle);
        await release(unfinished, 'still in flight at the end of the stop drain');
      }
      // Parked by deliveries that ended during the drain.
      await release(parked.takeAll(), 'connector stopping');
      await Promise.all([deliveryLog.flush(), queues.flush()]);
      await acknowledged();
      senders.destroy();
      log.info('webhook delivery stopped');
    },
  };
}
