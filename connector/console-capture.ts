import { formatWithOptions } from 'node:util';
import type { Logger } from '../core/logger.js';
import { redactBinary } from '../core/redact.js';

/**
 * Baileys' dependencies print to the console: libsignal writes whole session records
 * (`Closing session: SessionEntry {…}`, with private keys, root and chain keys as buffers) to
 * stdout through console.info/warn/error, in the middle of our JSON log lines. Once installed,
 * every console call made from code under node_modules becomes a debug line of the logger with
 * every buffer replaced by its length; calls from our own code go to the console as before.
 *
 *   installConsoleCapture(logger);   // once per process, before the first socket opens
 */
const METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir'] as const;
type Method = (typeof METHODS)[number];

let installed: { logger: Logger } | undefined;

/** Idempotent: a second call only changes the logger the captured lines go to. */
export function installConsoleCapture(logger: Logger): void {
  if (installed) {
    installed.logger = logger;
    return;
  }
  const state = { logger };
  installed = state;
  for (const method of METHODS) {
    const original = console[method].bind(console) as (...args: unknown[]) => void;
    const captured = (...args: unknown[]): void => {
      const source = dependencyCalling(captured);
      if (source === undefined) return original(...args);
      if (!state.logger.isLevelEnabled('debug')) return;
      state.logger.debug(
        { source, console: method },
        formatWithOptions({ depth: 4, breakLength: Infinity }, ...args.map((arg) => redactBinary(arg))),
      );
    };
    console[method] = captured as Console[Method];
  }
}

const NODE_MODULES_PACKAGE = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/;

/** The package whose code called the console (its first stack frame), or undefined for ours. */
function dependencyCalling(wrapper: (...args: never[]) => unknown): string | undefined {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, wrapper);
  Error.stackTraceLimit = limit;
  const callerFrame = holder.stack?.split('\n')[1] ?? '';
  return NODE_MODULES_PACKAGE.exec(callerFrame)?.[1]?.replace('\\', '/');
}
