import type { LogFn } from 'pino';
import type { Logger } from './logger.js';

/** The levels a per-message or per-event logger is used at. */
export type LazyLog = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/**
 * A child logger made by the first call that logs at an enabled level: most messages and
 * webhook events log nothing above debug, and a pino child each cost more than the work it
 * would describe (docs/benchmarks/history.md, the inbound hot path).
 */
export function lazyChild(parent: Logger, bindings: () => Record<string, unknown>): LazyLog {
  let child: Logger | undefined;
  const at = (level: 'debug' | 'info' | 'warn' | 'error') =>
    ((...args: Parameters<LogFn>) => {
      if (parent.isLevelEnabled(level)) (child ??= parent.child(bindings()))[level](...args);
    }) as LogFn;
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
