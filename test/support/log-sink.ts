import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A log line as pino wrote it, parsed. */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

/** One line of a JSON log (pino's, a child process's stdout); a line that is not JSON is kept as its `msg`. */
export function parseLogLine(text: string): LogLine {
  try {
    return JSON.parse(text) as LogLine;
  } catch {
    return { msg: text };
  }
}

interface LogSinkOptions {
  /** Where the parsed lines go (by default an array of their own): several loggers can share one. */
  lines?: LogLine[];
  /** pino's `base`, in place of its pid and hostname. */
  base?: Record<string, unknown>;
  /** Also writes every line to stderr, to watch the log while a test runs. */
  echo?: boolean;
}

/** A pino logger writing into memory: tests read what an operator would read in the log, line by line, parsed. */
export function logSink(level: pino.LevelWithSilent, options: LogSinkOptions = {}): { logger: Logger; lines: LogLine[] } {
  const lines = options.lines ?? [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) {
        if (!text.trim()) continue;
        if (options.echo) process.stderr.write(`${text}\n`);
        lines.push(parseLogLine(text));
      }
      done();
    },
  });
  return { logger: pino({ level, ...(options.base ? { base: options.base } : {}) }, sink), lines };
}
