import { ProtocolAddress, SessionBuilder, type SessionRecord, type SignalStorage } from 'libsignal';
// The package's index typings leave its curve module out; the module ships its own.
import * as curve from 'libsignal/src/curve.js';
import { logSink } from '../support/log-sink.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { installConsoleCapture as InstallConsoleCapture } from '../../connector/console-capture.js';

/**
 * libsignal prints whole session records (private, root and chain keys) to the console. Once
 * the capture is installed, those calls become debug lines of our logger with every buffer
 * replaced by its length, and our own console calls are untouched.
 */
/** What reached the real console (the methods in place before the capture was installed). */
const reachedConsole: { method: string; args: unknown[] }[] = [];
const originals = { info: console.info, warn: console.warn, log: console.log };

let installConsoleCapture: typeof InstallConsoleCapture;

beforeAll(async () => {
  for (const method of ['info', 'warn', 'log'] as const) {
    console[method] = (...args: unknown[]) => void reachedConsole.push({ method, args });
  }
  // The test setup (test/support/quiet-dependencies.ts) already installed the capture in this
  // process, around the console it found; a fresh copy of the module installs it around ours.
  vi.resetModules();
  ({ installConsoleCapture } = await import('../../connector/console-capture.js'));
});
afterAll(() => {
  Object.assign(console, originals);
});

/**
 * A real libsignal session set up twice towards the same device: the second setup closes the
 * first session, and libsignal prints `Closing session:` with the session record.
 */
async function makeLibsignalCloseASession(): Promise<{ privKeys: Buffer[] }> {
  const ours = curve.generateKeyPair();
  const theirIdentity = curve.generateKeyPair();
  const theirSignedPreKey = curve.generateKeyPair();
  const theirPreKey = curve.generateKeyPair();
  const sessions = new Map<string, SessionRecord>();
  const storage: SignalStorage = {
    loadSession: async (id) => sessions.get(id),
    storeSession: async (id, record) => void sessions.set(id, record),
    isTrustedIdentity: () => true,
    loadPreKey: async () => undefined,
    removePreKey: () => undefined,
    loadSignedPreKey: () => ({ privKey: Buffer.from(ours.privKey), pubKey: Buffer.from(ours.pubKey) }),
    getOurRegistrationId: () => 1,
    getOurIdentity: () => ({ privKey: Buffer.from(ours.privKey), pubKey: Buffer.from(ours.pubKey) }),
  };
  const device = {
    registrationId: 2,
    identityKey: theirIdentity.pubKey,
    signedPreKey: {
      keyId: 1,
      publicKey: theirSignedPreKey.pubKey,
      signature: curve.calculateSignature(theirIdentity.privKey, theirSignedPreKey.pubKey),
    },
    preKey: { keyId: 1, publicKey: theirPreKey.pubKey },
  };
  const builder = new SessionBuilder(storage, new ProtocolAddress('15550009999', 1));
  await builder.initOutgoing(device);
  await builder.initOutgoing(device);
  return { privKeys: [ours.privKey, theirIdentity.privKey].map((k) => Buffer.from(k)) };
}

describe('console capture', () => {
  it("libsignal's session dump becomes one debug line with no key bytes; nothing reaches the console", async () => {
    const { logger, lines } = logSink('debug');
    installConsoleCapture(logger);
    reachedConsole.length = 0;
    await makeLibsignalCloseASession();

    const closing = lines.filter((l) => String(l.msg).startsWith('Closing session:'));
    expect(closing).toHaveLength(1);
    expect(closing[0]).toMatchObject({ level: 20, source: 'libsignal', console: 'info' });
    const text = JSON.stringify(lines);
    expect(text).toMatch(/privKey: '\[32 bytes\]'/);
    expect(text).toMatch(/rootKey: '\[32 bytes\]'/);
    expect(text).not.toMatch(/<Buffer|\b[0-9a-f]{2}( [0-9a-f]{2}){7}/);
    expect(reachedConsole).toEqual([]);
  });

  it('at info, the dump is dropped altogether', async () => {
    const { logger, lines } = logSink('info');
    installConsoleCapture(logger);
    reachedConsole.length = 0;
    await makeLibsignalCloseASession();
    expect(lines).toEqual([]);
    expect(reachedConsole).toEqual([]);
  });

  it('console calls from our own code go to the console unchanged', () => {
    const { logger, lines } = logSink('debug');
    installConsoleCapture(logger);
    reachedConsole.length = 0;
    const ours = { note: 'kept' };
    console.info('ours', ours);
    console.warn('careful');
    expect(reachedConsole).toEqual([
      { method: 'info', args: ['ours', ours] },
      { method: 'warn', args: ['careful'] },
    ]);
    expect(lines).toEqual([]);
  });
});
