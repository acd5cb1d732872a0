import { test } from 'vitest';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../../sandbox/index.js';
import { linkClient, type SandboxClient } from './sandbox-client.js';

/** A sandbox with two companions linked to it, alice first and then bob. */
export interface LinkedPair {
  sandbox: RunningSandbox;
  alice: SandboxClient;
  bob: SandboxClient;
}

export interface LinkedPairOptions {
  alice: { phone: string; pushName?: string };
  bob: { phone: string; pushName?: string };
  /** Passed to `startSandbox` after `port: 0`. */
  sandbox?: Omit<SandboxOptions, 'port'>;
}

/**
 * `test` with a file-scoped `linked` fixture: one sandbox per file with alice and bob linked,
 * set up for the first test that asks for it and stopped (clients, then sandbox) after the file.
 */
export function withLinkedPair(options: LinkedPairOptions) {
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern (none here)
  return test.extend('linked', { scope: 'file' }, async ({}, { onCleanup }): Promise<LinkedPair> => {
    const sandbox = await startSandbox({ port: 0, ...options.sandbox });
    let alice: SandboxClient | undefined;
    let bob: SandboxClient | undefined;
    onCleanup(async () => {
      await Promise.all([alice?.stop(), bob?.stop()]);
      await sandbox.stop();
    });
    alice = await linkClient(sandbox, options.alice.phone, { pushName: options.alice.pushName });
    bob = await linkClient(sandbox, options.bob.phone, { pushName: options.bob.pushName });
    return { sandbox, alice, bob };
  });
}
