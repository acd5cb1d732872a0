import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The root logger writes to the process's stdout, so it is read from a process of its own. */
async function stdoutOf(script: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info' },
  });
  return stdout.split('\n').filter(Boolean);
}

describe('root logger', () => {
  it('writes byte arrays in fields as their length only, and keeps errors and plain fields', async () => {
    const lines = await stdoutOf(`
      const { logger } = await import('./core/logger.ts');
      logger.info({ accountId: 'a1', keyPair: { private: Buffer.alloc(32, 0xab) } }, 'with a key');
      logger.error({ err: new Error('boom') }, 'failed');
    `);
    expect(lines).toHaveLength(2);
    const [withKey, failed] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(withKey).toMatchObject({
      level: 30,
      service: 'wa-gateway',
      accountId: 'a1',
      keyPair: { private: '[32 bytes]' },
      msg: 'with a key',
    });
    expect(lines[0]).not.toContain('abab');
    expect(failed).toMatchObject({ level: 50, err: { type: 'Error', message: 'boom' }, msg: 'failed' });
  });

  it('writes an error as its name, message, code and stack frames: no cause, nothing the message quotes twice', async () => {
    const lines = await stdoutOf(`
      const { logger } = await import('./core/logger.ts');
      const error = Object.assign(new Error('write failed: hello-quoted', { cause: new Error('payload hello-secret') }), { code: 'EIO' });
      logger.error({ err: error }, 'failed');
    `);
    expect(lines).toHaveLength(1);
    const failed = JSON.parse(lines[0] ?? '{}') as { err?: Record<string, unknown> };
    expect(failed.err).toMatchObject({ type: 'Error', message: 'write failed: hello-quoted', code: 'EIO' });
    expect(Object.keys(failed.err ?? {}).sort()).toEqual(['code', 'message', 'stack', 'type']);
    // Frame lines only: where it was thrown, not the first line that repeats the message.
    const stack = String(failed.err?.stack);
    expect(stack.split('\n').every((line) => /^\s+at /.test(line))).toBe(true);
    expect(lines[0]?.split('hello-quoted')).toHaveLength(2);
    expect(lines[0]).not.toContain('hello-secret');
  });
});
