/**
 * The connector's operations metrics as CloudWatch sees them (Embedded Metric Format log lines,
 * connector/metrics/emf.ts), named once for the emitter and for the CDK alarms and scaling.
 */
export const METRICS_NAMESPACE = 'WaGateway';
/** The one dimension: the ECS service (all tasks of a deployment add up). */
export const METRICS_DIMENSION = 'Service';
export const METRICS_SERVICE = 'connector';
/** The second dimension of the per-cache lines: the cache's name (core/bounded-cache.ts). */
export const METRICS_CACHE_DIMENSION = 'Cache';

export const METRIC = {
  accountsOwned: 'AccountsOwned',
  accountsConnected: 'AccountsConnected',
  accountsReconnecting: 'AccountsReconnecting',
  accountsLoggedOut: 'AccountsLoggedOut',
  inboundMessages: 'InboundMessages',
  commands: 'Commands',
  sendLatency: 'SendLatency',
  decryptFailures: 'DecryptFailures',
  rss: 'ResidentMemory',
  cacheEntries: 'CacheEntries',
  cacheMaxEntries: 'CacheMaxEntries',
  /** The fullest bounded cache's entries as a percentage of its bound (100: it evicts). */
  cacheFullestPercent: 'CacheFullestPercent',
} as const;
