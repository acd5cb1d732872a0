import { formatWithOptions } from 'node:util';
import type { Logger } from '../core/logger.js';

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
      state.logger.debug({ source, console: method }, formatWithOptions({ depth: 4, breakLength: Infinity }, ...args.map((arg) => redact(arg))));
    };
    console[method] = captured as Console[Method];
  }
}

const NODE_MODULES_PACKAGE = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/;

/** The package whose code called the console (its first stack frame), or undefined for ours. */
export function dependencyCalling(wrapper: (...args: never[]) => unknown): string | undefined {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, wrapper);
  Error.stackTraceLimit = limit;
  const callerFrame = holder.stack?.split('\n')[1] ?? '';
  return NODE_MODULES_PACKAGE.exec(callerFrame)?.[1]?.replace('\\', '/');
}

const MAX_DEPTH = 8;

/**
 * A copy of `value` in which every byte array (Buffer, typed array, ArrayBuffer) is replaced by
 * its length: session records hold their keys as buffers. Cycles and very deep values are cut.
 */
export function redact(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value instanceof Uint8Array || ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    return `[${value.byteLength} bytes]`;
  }
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[…]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1, seen));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = redact(item, depth + 1, seen);
  return copy;
}
