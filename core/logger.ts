import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The root logger: one JSON line per event on stdout. Standard keys across the codebase are
 * `accountId`, `messageId` and `requestId`; message contents and keys stay at debug or below.
 */
export const logger: Logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'wa-gateway' },
  timestamp: pino.stdTimeFunctions.isoTime,
});

export function createLogger(bindings: Record<string, unknown>, parent: Logger = logger): Logger {
  return parent.child(bindings);
}
