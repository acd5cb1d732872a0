import { listWebhooks } from '../../core/store/webhooks.js';
import type { WebhookRegistration } from '../../core/schemas/webhook.js';
import type { Table } from '../../core/store/table.js';

/**
 * Registered webhooks, read at most once per `ttlMs`: a burst of events costs one Query, and a
 * webhook registered through the API is used within a few seconds.
 */
export function createRegistrationCache(table: Table, ttlMs = 5_000): { all(): Promise<WebhookRegistration[]> } {
  let cached: { registrations: WebhookRegistration[]; at: number } | undefined;
  let loading: Promise<WebhookRegistration[]> | undefined;
  return {
    async all() {
      if (cached && Date.now() - cached.at < ttlMs) return cached.registrations;
      loading ??= listWebhooks(table)
        .then((registrations) => {
          cached = { registrations, at: Date.now() };
          return registrations;
        })
        .finally(() => {
          loading = undefined;
        });
      return loading;
    },
  };
}
