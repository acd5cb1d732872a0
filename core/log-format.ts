/**
 * How the root logger writes: JSON lines for machines (containers, CI, pipes), or a short
 * readable line per event when a person watches a terminal. The choice is made once, from the
 * stream itself, so `npm start | jq` and `docker logs` still get JSON.
 */
export function wantsPrettyLogs(stream: { isTTY?: boolean }): boolean {
  return stream.isTTY === true;
}

const LEVELS: Record<number, { name: string; color: number }> = {
  10: { name: 'TRACE', color: 90 },
  20: { name: 'DEBUG', color: 36 },
  30: { name: 'INFO', color: 32 },
  40: { name: 'WARN', color: 33 },
  50: { name: 'ERROR', color: 31 },
  60: { name: 'FATAL', color: 35 },
};

/** Shown by the line's layout itself, or the same on every line. */
const LAYOUT_KEYS = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname', 'err']);

const paint = (color: number, text: string, colors: boolean) => (colors ? `\u001b[${color}m${text}\u001b[0m` : text);

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

function formatTime(time: unknown): string {
  if (typeof time === 'string') return time.slice(11, 23);
  if (typeof time === 'number') return new Date(time).toISOString().slice(11, 23);
  return '';
}

function formatError(err: unknown): string {
  if (!err || typeof err !== 'object') return `err=${formatValue(err)}`;
  const { stack, message } = err as { stack?: unknown; message?: unknown };
  const text = typeof stack === 'string' ? stack : typeof message === 'string' ? message : JSON.stringify(err);
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

/**
 * One pino JSON line as `12:00:01.234 INFO  message  accountId=alice key=value`, with an error's
 * stack on the lines below. A line that is not JSON is passed through unchanged.
 */
export function prettyLogLine(line: string, colors = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const level = LEVELS[Number(entry.level)] ?? { name: String(entry.level), color: 37 };
  const fields = Object.entries(entry)
    .filter(([key]) => !LAYOUT_KEYS.has(key))
    .map(([key, value]) => `${paint(90, `${key}=`, colors)}${formatValue(value)}`);
  const head = [
    paint(90, formatTime(entry.time), colors),
    paint(level.color, level.name.padEnd(5), colors),
    typeof entry.msg === 'string' ? entry.msg : '',
    ...fields,
  ]
    .filter(Boolean)
    .join(' ');
  return entry.err === undefined ? `${head}\n` : `${head}\n${formatError(entry.err)}\n`;
}

/** A pino destination that writes each line through `prettyLogLine`. */
export function prettyDestination(out: NodeJS.WritableStream & { isTTY?: boolean }): { write(chunk: string): boolean } {
  const colors = out.isTTY === true && !process.env.NO_COLOR;
  return { write: (chunk: string) => out.write(prettyLogLine(chunk, colors)) };
}
