import type { Logger } from '../../core/logger.js';
import type { WebhookRegistration } from '../../core/schemas/webhook.js';
import { webhookBody, type WebhookEvent } from '../../core/schemas/webhook-event.js';
import type { Table } from '../../core/store/table.js';
import { findDeliveries, type DeliveryStatus } from '../../core/store/webhook-deliveries.js';
import type { CircuitChange } from './circuit.js';
import { pairOf, targetsOf } from './delivery-pairs.js';
import type { ParkedEvents } from './parked-events.js';
import type { PostOutcome } from './post.js';
import type { SharedCircuits } from './shared-circuits.js';
import { targetForLogs } from './targets/dispatch.js';

/** What a probe uses of the delivery worker. */
export interface ProbeParts {
  parked: ParkedEvents;
  circuits: Pick<SharedCircuits, 'admit' | 'record'>;
  registrations: { all(): Promise<WebhookRegistration[]> };
  table: Table;
  log: Logger;
  /** WEBHOOK_TIMEOUT_MS. */
  timeoutMs: number;
  post(registration: WebhookRegistration, event: WebhookEvent, rawBody: string, attempt: number): Promise<PostOutcome>;
  record(
    event: WebhookEvent,
    webhookId: string,
    status: DeliveryStatus,
    attempts: number,
    options: { lastError?: string | undefined },
  ): Promise<void>;
  onCircuitChange(url: string, change: CircuitChange): void;
}

/**
 * The probe of an open circuit: a held event is POSTed to its URL alone (the event stays
 * invisible meanwhile). Its outcome is logged for the pair before the circuit closes, so the
 * release that follows does not POST it to that webhook again.
 */
export async function probe(url: string, parts: ProbeParts): Promise<void> {
  const { circuits, log } = parts;
  const candidate = parts.parked.probeCandidate(url, parts.timeoutMs + 5_000);
  // None held: the next event received for the URL is the probe instead.
  if (!candidate) return;
  const event = candidate.body;
  const registration = targetsOf(event, await parts.registrations.all()).find((r) => r.url === url);
  // Deleted meanwhile: nothing goes to that URL any more.
  if (!registration) return;
  let rawBody: string;
  try {
    rawBody = JSON.stringify(webhookBody(event));
  } catch {
    return;
  }
  const stored = (await findDeliveries(parts.table, [pairOf(event, registration.webhookId)])).get(registration.webhookId);
  // Of the connectors whose probe is due, the one that claims it in the shared circuit.
  if ((await circuits.admit(url)) !== 'probe') return;
  const attempt = (stored?.attempts ?? 0) + 1;
  const outcome = await parts.post(registration, event, rawBody, attempt);
  await parts
    .record(event, registration.webhookId, outcome.ok ? 'delivered' : 'pending', attempt, {
      lastError: outcome.ok ? undefined : outcome.reason,
    })
    .catch((error: unknown) => log.warn({ err: error, eventId: event.eventId }, 'recording the probe delivery failed'));
  if (!outcome.ok) log.debug({ url: targetForLogs(url), reason: outcome.reason }, 'webhook probe failed');
  parts.onCircuitChange(url, await circuits.record(url, outcome.ok, 'probe'));
}
