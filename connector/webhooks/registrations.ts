import { listWebhooks } from '../../core/store/webhooks.js';
import type { Table } from '../../core/store/table.js';

/**
 * Registered webhook URLs, read at most once per `ttlMs`: a burst of events costs one Query,
 * and a URL registered through the API is used within a few seconds.
 */
export function createRegistrationCache(table: Table, ttlMs = 5_000): { urls(): Promise<string[]> } {
  let cached: { urls: string[]; at: number } | undefined;
  let loading: Promise<string[]> | undefined;
  return {
    async urls() {
      if (cached && Date.now() - cached.at < ttlMs) return cached.urls;
      loading ??= listWebhooks(table)
        .then((registrations) => {
          cached = { urls: registrations.map((r) => r.url), at: Date.now() };
          return cached.urls;
        })
        .finally(() => {
          loading = undefined;
        });
      return loading;
    },
  };
}
