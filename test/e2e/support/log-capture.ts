import type { Logger, pino } from 'pino';
import { type LogLine, logSink } from '../../support/log-sink.js';
import { waitFor } from '../../support/wait.js';

export type { LogLine };

export interface CapturedLogs {
  logger: Logger;
  /** Every line so far, parsed. */
  lines: LogLine[];
  /** Resolves with the first line (from index `from` on) matching `match`. */
  waitForLine(what: string, match: (line: LogLine) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<LogLine>;
  /** The raw QR text of the next `qr` line of the account logged at or after `from`. */
  waitForQr(accountId: string, options?: { from?: number; timeoutMs?: number }): Promise<string>;
  /** Lines logged after position `from` that match. */
  linesSince(from: number, match: (line: LogLine) => boolean): LogLine[];
}

/**
 * A pino logger writing JSON lines into memory, so tests read what an operator would read in
 * the connector's log (the QR line in particular). Set E2E_LOG=1 to also echo to stderr.
 */
export function captureLogs(level: pino.LevelWithSilent = 'info'): CapturedLogs {
  const { logger, lines } = logSink(level, { base: { service: 'wa-gateway' }, echo: process.env.E2E_LOG === '1' });

  const find = (from: number, match: (line: LogLine) => boolean) => lines.slice(from).find(match);
  return {
    logger,
    lines,
    waitForLine: (what, match, options = {}) =>
      waitFor(what, () => find(options.from ?? 0, match), { timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 50 }),
    async waitForQr(accountId, options = {}) {
      const line = await waitFor(
        `a QR line for ${accountId}`,
        () => find(options.from ?? 0, (l) => l.event === 'qr' && l.accountId === accountId && typeof l.qr === 'string'),
        { timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 50 },
      );
      return String(line.qr);
    },
    linesSince: (from, match) => lines.slice(from).filter(match),
  };
}
