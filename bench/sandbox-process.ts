import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { SandboxDescriptor } from '../sandbox/index.js';

/**
 * The sandbox in its own process (in memory), so that it does not share a core with what a
 * benchmark measures. Resolves with its descriptor, the first line `npm run sandbox` prints.
 */
export async function startSandboxProcess(): Promise<{ descriptor: SandboxDescriptor; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/cli.ts'], {
    env: { ...process.env, SANDBOX_IN_MEMORY: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  return {
    descriptor: JSON.parse(firstLine) as SandboxDescriptor,
    pid: child.pid ?? -1,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
