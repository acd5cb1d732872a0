import { pino, type Logger } from 'pino';

/**
 * The sandbox is quiet unless asked: SANDBOX_LOG_LEVEL (default `warn`). Logs go to stderr so
 * that stdout carries only the descriptor the CLI prints.
 */
export function createSandboxLogger(level = process.env.SANDBOX_LOG_LEVEL ?? 'warn'): Logger {
  return pino({ name: 'sandbox', level }, pino.destination(2));
}

export type { Logger };
