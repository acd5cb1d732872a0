import { pino, type Logger } from 'pino';
import { prettyDestination, wantsPrettyLogs } from './log-format.js';
import { redactFields } from './redact.js';

export type { Logger };

/** What a logged error shows. */
interface LoggedError {
  type: string;
  message: string;
  code?: string | number;
  /** Where it was thrown: the stack's frame lines only. */
  stack?: string;
}

/**
 * The `err` serializer of every logger made from the root one: the error's name (pino's `type`
 * key), message, code, and the frame lines of its stack (file and line, which an operator needs
 * for an unexpected 500). The stack's own first line and the cause chain are left out: a library
 * error may quote the payload it failed on there, and a logged error must not print message
 * contents.
 */
function errorFields(error: unknown): LoggedError {
  if (!(error instanceof Error)) return { type: 'Error', message: String(error) };
  const code: unknown = (error as { code?: unknown }).code;
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(frames ? { stack: frames } : {}),
  };
}

/**
 * The root logger: one JSON line per event on stdout, or a readable line when stdout is a
 * terminal (log-format.ts). Standard keys across the codebase are `accountId`, `messageId`,
 * `requestId`, `err` (an error, written by errorFields) and `component` (the part a sub-logger
 * belongs to); message contents stay at debug or below. Byte arrays in logged fields are written
 * as their length only, at every level: Baileys and libsignal keep keys in buffers, and a logged
 * object holding one must not print it.
 */
export const logger: Logger = pino(
  {
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service: 'wa-gateway' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: redactFields },
    serializers: { err: errorFields },
  },
  // Otherwise pino's own stdout destination, as before.
  wantsPrettyLogs(process.stdout) ? prettyDestination(process.stdout) : undefined,
);
