import { METRIC, METRICS_CACHE_DIMENSION, METRICS_DIMENSION, METRICS_NAMESPACE, METRICS_SERVICE } from '../../core/metric-names.js';
import type { ConnectorMetrics } from './connector-metrics.js';

/**
 * Prometheus name -> CloudWatch name and unit of the values sent as EMF. Each is a CloudWatch
 * custom metric at $0.30 a month, so the line holds by default only what nothing free shows:
 * the accounts connected and reconnecting (an alarm watches it), the messages received and
 * those that could not be decrypted ($1.20 a month). The rest with `detail` (docs/connector.md,
 * Metrics); the webhook backlog never: it is SQS's own free metric.
 */
const EMF_METRICS: [string, string, string][] = [
  ['wa_accounts_connected', METRIC.accountsConnected, 'Count'],
  ['wa_accounts_reconnecting', METRIC.accountsReconnecting, 'Count'],
  ['wa_inbound_messages_total', METRIC.inboundMessages, 'Count'],
  ['wa_decrypt_failures_total', METRIC.decryptFailures, 'Count'],
];
/** With `detail`: what the API's, ECS's and SQS's own metrics nearly show already. */
const EMF_DETAIL_METRICS: [string, string, string][] = [
  ['wa_accounts_owned', METRIC.accountsOwned, 'Count'],
  ['wa_accounts_logged_out', METRIC.accountsLoggedOut, 'Count'],
  ['wa_commands_total', METRIC.commands, 'Count'],
  ['wa_resident_memory_bytes', METRIC.rss, 'Bytes'],
];
const COUNTERS = new Set(['wa_inbound_messages_total', 'wa_commands_total', 'wa_decrypt_failures_total']);
const EVERY_MS = 60_000;

/** The caches summed up (`cachesSummed`), with `detail`. */
const CACHE_SUMS = [
  { name: METRIC.cacheEntries, unit: 'Count' },
  { name: METRIC.cacheFullestPercent, unit: 'Percent' },
];

/** The Prometheus values the line carries. */
const sourcesOf = (detail: boolean) => (detail ? [...EMF_METRICS, ...EMF_DETAIL_METRICS] : EMF_METRICS);

function lineMetrics(detail: boolean): { name: string; unit: string }[] {
  return [...sourcesOf(detail).map(([, name, unit]) => ({ name, unit })), ...(detail ? CACHE_SUMS : [])];
}

/** The CloudWatch custom metrics of the service line, each billed monthly (bench/cost prices them). */
export function emfMetricNames(detail: boolean): string[] {
  return lineMetrics(detail).map(({ name }) => name);
}

/**
 * The bounded caches summed up for the service-wide line (with `detail`): all their entries, and
 * how full the fullest one is (at 100 % it evicts). Two metrics instead of two per cache: per
 * cache they were 28 custom metrics. The per-cache figures stay on /metrics, and in EMF with
 * METRICS_EMF_CACHES.
 */
function cachesSummed(sizes: Record<string, { entries: number; maxEntries: number }>): { entries: number; fullestPercent: number } {
  let entries = 0;
  let fullestPercent = 0;
  for (const size of Object.values(sizes)) {
    entries += size.entries;
    if (size.maxEntries > 0) fullestPercent = Math.max(fullestPercent, Math.round((size.entries / size.maxEntries) * 100));
  }
  return { entries, fullestPercent };
}

function cacheLine(cache: string, size: { entries: number; maxEntries: number }): Record<string, unknown> {
  return {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [[METRICS_DIMENSION, METRICS_CACHE_DIMENSION]],
          Metrics: [
            { Name: METRIC.cacheEntries, Unit: 'Count' },
            { Name: METRIC.cacheMaxEntries, Unit: 'Count' },
          ],
        },
      ],
    },
    [METRICS_DIMENSION]: METRICS_SERVICE,
    [METRICS_CACHE_DIMENSION]: cache,
    [METRIC.cacheEntries]: size.entries,
    [METRIC.cacheMaxEntries]: size.maxEntries,
  };
}

/**
 * Every minute one CloudWatch Embedded Metric Format line on stdout (the awslogs driver ships it,
 * CloudWatch extracts the metrics; docs/connector.md, Metrics). With `detail`, it also holds the
 * detail metrics and the bounded caches summed up; with `perCache`, one more line per bounded
 * cache (dimensions Service and Cache: its entries and its bound). Counters are sent as the
 * increase since the last line. Returns the stopper.
 */
export function startEmfLines(
  metrics: ConnectorMetrics,
  write: (line: string) => void = (line) => process.stdout.write(line),
  { everyMs = EVERY_MS, detail = false, perCache = false }: { everyMs?: number; detail?: boolean; perCache?: boolean } = {},
): () => void {
  const sent = sourcesOf(detail);
  const metricsOfLine = lineMetrics(detail).map(({ name, unit }) => ({ Name: name, Unit: unit }));
  let last = new Map<string, number>();
  const timer = setInterval(() => {
    void metrics.snapshot().then((values) => {
      const line: Record<string, unknown> = {
        _aws: {
          Timestamp: Date.now(),
          CloudWatchMetrics: [
            {
              Namespace: METRICS_NAMESPACE,
              Dimensions: [[METRICS_DIMENSION]],
              Metrics: metricsOfLine,
            },
          ],
        },
        [METRICS_DIMENSION]: METRICS_SERVICE,
      };
      for (const [source, name] of sent) {
        const value = values.get(source) ?? 0;
        line[name] = COUNTERS.has(source) ? value - (last.get(source) ?? 0) : value;
      }
      last = values;
      const sizes = detail || perCache ? metrics.cacheSizes() : {};
      if (detail) {
        const caches = cachesSummed(sizes);
        line[METRIC.cacheEntries] = caches.entries;
        line[METRIC.cacheFullestPercent] = caches.fullestPercent;
      }
      write(`${JSON.stringify(line)}\n`);
      if (perCache) for (const [cache, size] of Object.entries(sizes)) write(`${JSON.stringify(cacheLine(cache, size))}\n`);
    });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
