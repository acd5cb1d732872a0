import { listWebhooks } from '../../core/store/webhooks.js';
import type { WebhookRegistration } from '../../core/schemas/webhook.js';
import type { Table } from '../../core/store/table.js';

/** Fresh reads for events that no cached registration selects start at most this often. */
const MIN_FRESH_READ_GAP_MS = 250;

interface RegistrationCache {
  /** The registrations as read at most `ttlMs` ago: a burst of events costs one Query. */
  all(): Promise<WebhookRegistration[]>;
  /**
   * The registrations as stored at `queuedAt` (Unix ms) or later: the cached ones when they
   * were read after it, else those of a read started after it. Reads for this start at most
   * every MIN_FRESH_READ_GAP_MS, shared by every caller waiting meanwhile.
   */
  asOf(queuedAt: number): Promise<WebhookRegistration[]>;
}

interface Read {
  /** When the Query was sent: the registrations it returns are those stored by then. */
  startedAt: number;
  registrations: Promise<WebhookRegistration[]>;
}

/**
 * Registered webhooks for the delivery worker. A webhook registered through the API is used
 * within `ttlMs` for events some registration already selects; an event that none selects is
 * checked against the registrations as of its queuing before it is dropped (`asOf`), so the
 * first webhook of an account, or one for a new kind of event, gets every event queued after it
 * was registered.
 */
export function createRegistrationCache(table: Table, ttlMs = 5_000): RegistrationCache {
  let cached: { registrations: WebhookRegistration[]; at: number } | undefined;
  let reading: Read | undefined;
  let lastReadStart = Number.NEGATIVE_INFINITY;

  /** Strongly consistent: a registration stored before the read started is in it. */
  function read(): Read {
    if (reading) return reading;
    const startedAt = Date.now();
    lastReadStart = startedAt;
    const current: Read = {
      startedAt,
      registrations: listWebhooks(table, { consistent: true })
        .then((registrations) => {
          if (!cached || cached.at < startedAt) cached = { registrations, at: startedAt };
          return registrations;
        })
        .finally(() => {
          if (reading === current) reading = undefined;
        }),
    };
    reading = current;
    return current;
  }

  return {
    async all() {
      if (cached && Date.now() - cached.at < ttlMs) return cached.registrations;
      return read().registrations;
    },
    async asOf(queuedAt) {
      // A producer's clock ahead of this one must not hold the event until it catches up.
      const at = Math.min(queuedAt, Date.now());
      for (;;) {
        if (cached && cached.at >= at) return cached.registrations;
        if (reading) {
          if (reading.startedAt >= at) return reading.registrations;
          await reading.registrations.catch(() => undefined);
          continue;
        }
        const wait = lastReadStart + MIN_FRESH_READ_GAP_MS - Date.now();
        if (wait <= 0) return read().registrations;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    },
  };
}
