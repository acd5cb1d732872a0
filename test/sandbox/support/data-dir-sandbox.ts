import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../../sandbox/index.js';
import type { SandboxClient } from './sandbox-client.js';

/**
 * A temporary data directory for the sandboxes a suite starts (and restarts) in it. After the
 * suite the clients pushed to `clients` are stopped, then the last sandbox, then the directory removed.
 */
export function sandboxDataDir(prefix: string) {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  let sandbox: RunningSandbox | undefined;
  const clients: SandboxClient[] = [];

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await sandbox?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Starts a sandbox on the data directory; it is the one stopped after the suite. */
  const start = async (options: Omit<SandboxOptions, 'dataDir'>) => {
    sandbox = await startSandbox({ ...options, dataDir });
    return sandbox;
  };
  return { dataDir, clients, start };
}
