import { pino, type Logger } from 'pino';
import { prettyDestination, wantsPrettyLogs } from './log-format.js';
import { redactFields } from './redact.js';

export type { Logger };

/**
 * The root logger: one JSON line per event on stdout, or a readable line when stdout is a
 * terminal (log-format.ts). Standard keys across the codebase are
 * `accountId`, `messageId` and `requestId`; message contents stay at debug or below. Byte
 * arrays in logged fields are written as their length only, at every level: Baileys and
 * libsignal keep keys in buffers, and a logged object holding one must not print it.
 */
export const logger: Logger = pino(
  {
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service: 'wa-gateway' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: redactFields },
  },
  // Otherwise pino's own stdout destination, as before.
  wantsPrettyLogs(process.stdout) ? prettyDestination(process.stdout) : undefined,
);
