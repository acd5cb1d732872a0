/**
 * Webhook delivery: the consumer of the webhook event queue.
 *
 *   const delivery = startWebhookDelivery({ config, clients, logger });
 *   ...
 *   await delivery.stop();   // SIGTERM: stop receiving, finish in-flight POSTs, resolve
 *
 * Each event is POSTed (post.ts) to every registered URL not yet served, in parallel. When
 * every URL is served the SQS message is deleted (no DynamoDB access on this happy path).
 * Otherwise the URLs that answered 2xx are recorded in DynamoDB
 * (core/store/webhook-deliveries.ts), so the retry only goes to the URLs that failed, and the
 * message's visibility is set to the next backoff (backoff.ts): SQS hands it back then. The attempt number is the SQS receive count. After WEBHOOK_MAX_ATTEMPTS failed
 * attempts (4xx included: a receiver may be fixed) the event moves to the DLQ.
 * With no URL registered an event is dropped. Delivery is at least once: a receiver drops
 * duplicates by the stable X-Webhook-Id.
 */
import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { createQueues, type Queues, type Received } from '../../core/queues.js';
import { webhookPayloadSchema, type WebhookEvent } from '../../core/schemas/webhook-event.js';
import { tableOf } from '../../core/store/table.js';
import { findDeliveredUrls, recordDeliveredUrls } from '../../core/store/webhook-deliveries.js';
import { minimumRetrySpanSeconds, retryDelaySeconds } from './backoff.js';
import { resolveDeadLetterTarget, sendToDeadLetter, type DeadLetterTarget } from './dead-letter.js';
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
}

export interface WebhookDelivery {
  /** Stops receiving, waits for in-flight deliveries to finish (or be handed back), resolves. */
  stop(): Promise<void>;
}

/** Events handled at once; more wait in the queue. */
const MAX_IN_FLIGHT = 50;
const LONG_POLL_SECONDS = 20;
/** Pause after a failed receive (queue unreachable) before polling again. */
const RECEIVE_ERROR_PAUSE_MS = 2_000;

export function startWebhookDelivery(deps: WebhookDeliveryDeps): WebhookDelivery {
  const { config, logger } = deps;
  const log = logger.child({ component: 'webhook-delivery' });
  const table = tableOf(config, deps.clients);
  const queues = deps.queues ?? createQueues(config, deps.clients, logger);
  const registrations = createRegistrationCache(table, deps.registrationCacheMs);
  const maxAttempts = config.WEBHOOK_MAX_ATTEMPTS;
  // Long enough for the parallel POSTs of one event plus the bookkeeping around them.
  const visibilitySeconds = Math.ceil(config.WEBHOOK_TIMEOUT_MS / 1000) + 30;

  const stopController = new AbortController();
  const inFlight = new Set<Promise<void>>();
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

  async function deliver(received: Received<WebhookEvent>): Promise<void> {
    const event = received.body;
    const attempt = received.receiveCount;
    const eventLog = log.child({ accountId: event.accountId, eventId: event.eventId, attempt });
    const urls = await registrations.urls();
    if (urls.length === 0) {
      eventLog.debug('no webhook registered; event dropped');
      await queues.ackWebhookEvent(received.receiptHandle);
      return;
    }
    // Only a retry can have URLs already served: the first attempt needs no read.
    const delivered = attempt > 1 ? await findDeliveredUrls(table, event.eventId) : new Set<string>();
    const pending = urls.filter((url) => !delivered.has(url));
    // Exactly the fields of docs/webhooks.md, whatever else a future event might carry.
    const payload = webhookPayloadSchema.parse(event.payload);
    const outcomes = await Promise.all(
      pending.map(async (url) => ({
        url,
        outcome: await postWebhook(url, payload, { eventId: event.eventId, attempt }, config.WEBHOOK_TIMEOUT_MS, {
          allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
        }),
      })),
    );
    const failures = outcomes.flatMap((o) =>
      o.outcome.ok ? [] : [{ url: o.url, reason: o.outcome.reason, permanent: o.outcome.permanent === true }],
    );
    if (failures.length === 0) {
      await queues.ackWebhookEvent(received.receiptHandle);
      eventLog.debug({ urls: outcomes.length }, 'webhook event delivered');
      return;
    }
    // Remembered only when a retry will follow: then the URLs served now are skipped.
    await recordDeliveredUrls(table, event.eventId, outcomes.filter((o) => o.outcome.ok).map((o) => o.url));
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
    eventLog.warn({ failures: summary, retryInSeconds: delaySeconds }, 'webhook delivery failed; will retry');
  }

  function track(received: Received<WebhookEvent>): void {
    const work = deliver(received)
      .catch((error: unknown) => {
        // The message becomes visible again after its visibility timeout and is retried then.
        log.error({ err: error, eventId: received.body.eventId }, 'webhook delivery error');
      })
      .finally(() => inFlight.delete(work));
    inFlight.add(work);
  }

  async function loop(): Promise<void> {
    while (!stopController.signal.aborted) {
      if (inFlight.size >= MAX_IN_FLIGHT) {
        await Promise.race(inFlight);
        continue;
      }
      try {
        const batch = await queues.receiveWebhookEvents({
          maxMessages: Math.min(10, MAX_IN_FLIGHT - inFlight.size),
          waitSeconds: LONG_POLL_SECONDS,
          visibilityTimeoutSeconds: visibilitySeconds,
          abortSignal: stopController.signal,
        });
        for (const received of batch) track(received);
      } catch (error) {
        if (stopController.signal.aborted) break;
        log.error({ err: error }, 'receiving webhook events failed');
        await pause(RECEIVE_ERROR_PAUSE_MS, stopController.signal);
      }
    }
  }

  log.info(
    { maxAttempts, retryBaseMs: config.WEBHOOK_RETRY_BASE_MS, minimumRetrySpanSeconds: minimumRetrySpanSeconds(maxAttempts, config.WEBHOOK_RETRY_BASE_MS) },
    'webhook delivery started',
  );
  // Resolved at start so that a redrive limit below WEBHOOK_MAX_ATTEMPTS is reported at once.
  deadLetterTarget().catch((error: unknown) => log.warn({ err: error }, 'webhook dead-letter queue not resolved yet'));
  const running = loop();

  return {
    async stop() {
      stopController.abort();
      await running;
      await Promise.allSettled([...inFlight]);
      log.info('webhook delivery stopped');
    },
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
