/**
 * The gateway as `npm start` runs it (infra/local/start.ts: embedded emulators on disk under
 * DATA_DIR, the API and the connector in one process), spawned as the node binary itself so
 * that the PID signalled is the gateway's: a SIGKILL takes the emulators down with it, and a
 * restart on the same DATA_DIR reloads what reached the disk, as after a real crash.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { LogLine } from '../../test/e2e/support/log-capture.js';
import { poll } from './poll.js';
import { CONNECTOR_NODE_FLAGS } from '../../connector/node-flags.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const NODE_ARGS = [...CONNECTOR_NODE_FLAGS, '--import', 'tsx', 'infra/local/start.ts'];
const READY_TIMEOUT_MS = 180_000;

/** Where one gateway lives across its restarts: same data, same port, same log file. */
export interface GatewayHome {
  dataDir: string;
  port: number;
  logFile: string;
  /** WA_WS_URL, WA_ROOT_PUBLIC_KEY, WA_MEDIA_CA_FILE of the sandbox. */
  networkEnv: Record<string, string>;
  logLevel: string;
}

export interface ExitReport {
  /** From the signal to the process's exit, in ms. */
  ms: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when it had not exited within the cap and was SIGKILLed. */
  killedAfterCap: boolean;
}

export interface GatewayProcess {
  pid: number;
  apiUrl: string;
  /** Parsed JSON lines of this process's stdout. */
  lines: LogLine[];
  waitForLine(what: string, match: (line: LogLine) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<LogLine>;
  /** The raw QR text of the account's next `qr` log line at or after `from`. */
  waitForQr(accountId: string, from: number, timeoutMs?: number): Promise<string>;
  /** SIGKILL: nothing is flushed, released or stopped. */
  kill(): Promise<void>;
  /** SIGTERM, then waits for the exit (SIGKILL after `capMs`). */
  terminate(capMs: number): Promise<ExitReport>;
  isRunning(): boolean;
}

/** Every gateway process not yet exited, so that the bench never leaves one behind. */
const live = new Set<GatewayProcess>();
process.once('exit', () => {
  for (const gateway of live) process.kill(gateway.pid, 'SIGKILL');
});

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export async function startGatewayProcess(home: GatewayHome): Promise<GatewayProcess> {
  const log: WriteStream = createWriteStream(home.logFile, { flags: 'a' });
  const child = spawn(process.execPath, NODE_ARGS, {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      PORT: String(home.port),
      HOST: '127.0.0.1',
      DATA_DIR: home.dataDir,
      LOG_LEVEL: home.logLevel,
      // Unpaced accounts: the crash bench measures durability, not pacing (docs/sending.md#paced-sends).
      SEND_PACING_DEFAULT: 'off',
      ...home.networkEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('the gateway process did not start');
  log.write(`\n==== gateway pid ${pid} started ${new Date().toISOString()} ====\n`);

  const lines: LogLine[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    log.write(chunk);
    partial += chunk.toString('utf8');
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      if (!text.startsWith('{')) continue; // the QR drawn for a terminal
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        // A line that only looks like JSON: kept in the log file, not needed here.
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => log.write(chunk));

  let exitInfo: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal, at: performance.now() };
      live.delete(gateway);
      log.end(`==== gateway pid ${pid} exited (code ${code}, signal ${signal}) ${new Date().toISOString()} ====\n`);
      resolve();
    }),
  );

  const apiUrl = `http://127.0.0.1:${home.port}`;
  const gateway: GatewayProcess = {
    pid,
    apiUrl,
    lines,
    waitForLine: (what, match, options = {}) =>
      poll(
        what,
        () => {
          if (exitInfo)
            throw new Error(
              `the gateway exited (code ${exitInfo.code}, signal ${exitInfo.signal}) while waiting for ${what}; see ${home.logFile}`,
            );
          return lines.slice(options.from ?? 0).find(match);
        },
        { timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 50 },
      ),
    async waitForQr(accountId, from, timeoutMs = 120_000) {
      const line = await gateway.waitForLine(
        `the QR of ${accountId} in the gateway log`,
        (l) => l.event === 'qr' && l.accountId === accountId && typeof l.qr === 'string',
        { from, timeoutMs },
      );
      return String(line.qr);
    },
    async kill() {
      if (!exitInfo) child.kill('SIGKILL');
      await exited;
    },
    async terminate(capMs) {
      const sentAt = performance.now();
      if (!exitInfo) child.kill('SIGTERM');
      let killedAfterCap = false;
      const cap = setTimeout(() => {
        killedAfterCap = true;
        child.kill('SIGKILL');
      }, capMs);
      await exited;
      clearTimeout(cap);
      return { ms: exitInfo!.at - sentAt, code: exitInfo!.code, signal: exitInfo!.signal, killedAfterCap };
    },
    isRunning: () => !exitInfo,
  };
  live.add(gateway);

  try {
    await poll(
      `the gateway to answer GET /ping on ${apiUrl}`,
      async () => {
        if (exitInfo) throw new Error(`the gateway exited at start (code ${exitInfo.code}); see ${home.logFile}`);
        const response = await fetch(`${apiUrl}/ping`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
        return response?.ok;
      },
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: 200 },
    );
  } catch (error) {
    await gateway.kill();
    throw error;
  }
  return gateway;
}
