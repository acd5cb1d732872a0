import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnConnector } from '../e2e/support/child-connector.js';
import { useTestStack } from '../support/test-stack.js';

const recorder = fileURLToPath(new URL('../support/package-recorder.ts', import.meta.url));

/**
 * A connector that owns no account never needs the session code: Baileys with its protobufs and
 * libsignal (~40 MB of RSS, docs/benchmarks.md), sharp and ffmpeg. They load with the first
 * account (connector/session/load-account-session.ts) or the first media message. A static
 * import of any of them from the command or webhook code loads them at start, unnoticed by
 * every other test; this one runs connector/main.ts with no accounts and lists what it loaded.
 */
describe('an empty connector', { timeout: 60_000 }, () => {
  const ctx = useTestStack();

  it('starts and stops without loading Baileys, libsignal, sharp or ffmpeg', async () => {
    const child = spawnConnector(ctx.stack.env, ['--import', recorder]);
    try {
      await child.waitForLine('the connector to start', (l) => l.msg === 'connector started');
      expect(await child.terminate()).toBe(0);
    } finally {
      await child.kill();
    }
    const report = child.lines.find((l) => 'packagesLoaded' in l) as { packagesLoaded?: string[] } | undefined;
    const loaded = report?.packagesLoaded ?? [];
    // What it does load: a recorder that saw nothing would pass the check below.
    expect(loaded).toContain('@aws-sdk/client-dynamodb');
    expect(loaded).toContain('undici');
    const sessionOnly = ['@whiskeysockets/baileys', 'libsignal', 'sharp', 'fluent-ffmpeg', '@ffmpeg-installer/ffmpeg'];
    expect(loaded.filter((name) => sessionOnly.includes(name))).toEqual([]);
  });
});
