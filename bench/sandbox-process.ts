import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { SandboxDescriptor } from '../sandbox/index.js';

interface SandboxProcess {
  descriptor: SandboxDescriptor;
  /** The settings that point a connector at it. */
  env: { WA_WS_URL: string; WA_ROOT_PUBLIC_KEY: string; WA_MEDIA_CA_FILE: string; WA_VERSION_URL: string };
  pid: number;
  stop: () => Promise<void>;
}

/**
 * The sandbox in its own process (in memory), so that it does not share a core with what a
 * benchmark measures. Resolves with its descriptor, the first line `npm run sandbox` prints.
 */
export async function startSandboxProcess(): Promise<SandboxProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/cli.ts'], {
    env: { ...process.env, SANDBOX_IN_MEMORY: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  const descriptor = JSON.parse(firstLine) as SandboxDescriptor;
  return {
    descriptor,
    env: {
      WA_WS_URL: descriptor.wsUrl,
      WA_ROOT_PUBLIC_KEY: descriptor.rootPublicKey,
      WA_MEDIA_CA_FILE: descriptor.mediaCaFile,
      WA_VERSION_URL: descriptor.versionUrl,
    },
    pid: child.pid ?? -1,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
