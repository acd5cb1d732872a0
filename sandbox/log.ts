import { pino, type Logger } from 'pino';

/** The sandbox is quiet unless asked: SANDBOX_LOG_LEVEL (default `warn`). */
export function createSandboxLogger(level = process.env.SANDBOX_LOG_LEVEL ?? 'warn'): Logger {
  return pino({ name: 'sandbox', level });
}

export type { Logger };
