import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadMediaMessage, type AnyMessageContent, type WAMessage } from '@whiskeysockets/baileys';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { sandboxMediaDownloadOptions } from '../../sandbox/client.js';
import { linkClient, type SandboxClient } from './support/sandbox-client.js';

describe('sandbox: media upload and download', () => {
  let sandbox: RunningSandbox;
  let alice: SandboxClient;
  let bob: SandboxClient;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    alice = await linkClient(sandbox, '15550005001');
    bob = await linkClient(sandbox, '15550005002');
  });

  afterAll(async () => {
    await Promise.all([alice?.stop(), bob?.stop()]);
    await sandbox?.stop();
  });

  // Thumbnails and durations are given so Baileys does not try to compute them from random bytes.
  const cases: [string, (bytes: Buffer) => AnyMessageContent][] = [
    ['image', (bytes) => ({ image: bytes, mimetype: 'image/jpeg', caption: 'a picture', jpegThumbnail: '' })],
    ['document', (bytes) => ({ document: bytes, mimetype: 'application/pdf', fileName: 'report.pdf' })],
    ['audio', (bytes) => ({ audio: bytes, mimetype: 'audio/ogg; codecs=opus', seconds: 3 })],
    ['video', (bytes) => ({ video: bytes, mimetype: 'video/mp4', jpegThumbnail: '', seconds: 2 })],
  ];

  it.each(cases)('%s arrives byte-identical after download', async (_kind, content) => {
    const bytes = randomBytes(200_000 + Math.floor(Math.random() * 1000));
    const sent = await alice.sock!.sendMessage(bob.userJid, content(bytes));
    const received: WAMessage = await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'media message');
    const downloaded = await downloadMediaMessage(received, 'buffer', { options: sandboxMediaDownloadOptions(sandbox.descriptor) });
    expect(Buffer.compare(downloaded, bytes)).toBe(0);
  });

  it('logs no Baileys errors', () => {
    expect(alice.unexpectedErrors).toEqual([]);
    expect(bob.unexpectedErrors).toEqual([]);
  });
});
