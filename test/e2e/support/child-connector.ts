import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type LogLine, parseLogLine } from '../../support/log-sink.js';
import { waitFor } from '../../support/wait.js';
import { CONNECTOR_NODE_FLAGS } from '../../../connector/node-flags.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export interface ChildConnector {
  process: ChildProcess;
  pid: number;
  lines: LogLine[];
  /** Every stdout line as printed (for checks of the output itself). */
  stdout: string[];
  waitForLine(what: string, match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** SIGKILL: the connector dies without releasing anything, as on a crash. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit code. */
  terminate(): Promise<number | null>;
}

/**
 * `connector/main.ts` as a separate process (tsx on this Node), configured by `env` (emulator
 * endpoints and sandbox settings from the harness). Its JSON log lines are parsed from stdout.
 * `keepLines` bounds the lines kept (the most recent, for a long benchmark run; tests keep all).
 */
export function spawnConnector(
  env: Record<string, string>,
  nodeFlags: string[] = [],
  options: { keepLines?: number } = {},
): ChildConnector {
  const keepLines = options.keepLines ?? Number.POSITIVE_INFINITY;
  const child = spawn(process.execPath, [...CONNECTOR_NODE_FLAGS, ...nodeFlags, '--import', 'tsx', 'connector/main.ts'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const stdout: string[] = [];
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      stdout.push(text);
      if (!text.trim()) continue;
      if (process.env.E2E_LOG === '1') process.stderr.write(`[child] ${text}\n`);
      lines.push(parseLogLine(text));
    }
    // Trimmed in steps, so that the copy is rare.
    if (lines.length > 2 * keepLines) lines.splice(0, lines.length - keepLines);
    if (stdout.length > 2 * keepLines) stdout.splice(0, stdout.length - keepLines);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    if (process.env.E2E_LOG === '1') process.stderr.write(`[child:err] ${chunk.toString('utf8')}`);
  });
  // 'close', not 'exit': the last log lines may still be in the pipe when the process exits.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    process: child,
    pid: child.pid ?? -1,
    lines,
    stdout,
    waitForLine: (what, match, timeoutMs = 60_000) => waitFor(what, () => lines.find(match), { timeoutMs, intervalMs: 100 }),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async terminate() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
