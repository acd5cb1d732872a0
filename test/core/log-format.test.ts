import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { prettyDestination, prettyLogLine, wantsPrettyLogs } from '../../core/log-format.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('console format', () => {
  it('is readable only on a terminal', () => {
    expect(wantsPrettyLogs({ isTTY: true })).toBe(true);
    expect(wantsPrettyLogs({ isTTY: false })).toBe(false);
    expect(wantsPrettyLogs({})).toBe(false);
  });

  it('writes a pino line as time, level, message and fields, with an error stack below', () => {
    const line = JSON.stringify({
      level: 40,
      time: '2026-01-02T03:04:05.678Z',
      service: 'wa-gateway',
      accountId: 'alice',
      reason: 'two words',
      attempt: 2,
      msg: 'reconnect scheduled',
    });
    expect(prettyLogLine(line)).toBe('03:04:05.678 WARN  reconnect scheduled accountId=alice reason="two words" attempt=2\n');
    const failed = prettyLogLine(
      JSON.stringify({ level: 50, time: 0, msg: 'failed', err: { message: 'boom', stack: 'Error: boom\n    at here' } }),
    );
    expect(failed).toBe('00:00:00.000 ERROR failed\n    Error: boom\n        at here\n');
    expect(prettyLogLine('not json')).toBe('not json\n');
  });

  it('colours levels only when the stream is a terminal', () => {
    vi.stubEnv('NO_COLOR', '');
    const line = `${JSON.stringify({ level: 30, time: 0, msg: 'hello' })}\n`;
    const written: string[] = [];
    const sink = () =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          written.push(chunk.toString());
          done();
        },
      });
    prettyDestination(Object.assign(sink(), { isTTY: true })).write(line);
    prettyDestination(sink()).write(line);
    expect(written).toEqual(['\u001b[90m00:00:00.000\u001b[0m \u001b[32mINFO \u001b[0m hello\n', '00:00:00.000 INFO  hello\n']);
    vi.unstubAllEnvs();
  });

  it('keeps JSON lines when stdout is not a terminal (containers, CI, pipes)', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const { logger } = await import('./core/logger.ts'); logger.info({ accountId: 'a1' }, 'one'); logger.warn('two');`,
      ],
      { cwd: root, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info' } },
    );
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 30, accountId: 'a1', msg: 'one' }),
      expect.objectContaining({ level: 40, msg: 'two' }),
    ]);
  });
});
