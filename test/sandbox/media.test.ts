import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { downloadMediaMessage, type AnyMessageContent, type WAMessage } from '@whiskeysockets/baileys';
import { sandboxMediaDownloadOptions } from '../../sandbox/client.js';
import { withLinkedPair } from './support/linked-pair.js';

const it = withLinkedPair({ alice: { phone: '15550005001' }, bob: { phone: '15550005002' } });

describe('sandbox: media upload and download', () => {
  // Thumbnails and durations are given so Baileys does not try to compute them from random bytes.
  const cases: [string, (bytes: Buffer) => AnyMessageContent][] = [
    ['image', (bytes) => ({ image: bytes, mimetype: 'image/jpeg', caption: 'a picture', jpegThumbnail: '' })],
    ['document', (bytes) => ({ document: bytes, mimetype: 'application/pdf', fileName: 'report.pdf' })],
    ['audio', (bytes) => ({ audio: bytes, mimetype: 'audio/ogg; codecs=opus', seconds: 3 })],
    ['video', (bytes) => ({ video: bytes, mimetype: 'video/mp4', jpegThumbnail: '', seconds: 2 })],
  ];

  it.for(cases)('%s arrives byte-identical after download', async ([_kind, content], { linked: { sandbox, alice, bob } }) => {
    const bytes = randomBytes(200_000 + Math.floor(Math.random() * 1000));
    const sent = await alice.sock!.sendMessage(bob.userJid, content(bytes));
    const received: WAMessage = await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'media message');
    const downloaded = await downloadMediaMessage(received, 'buffer', { options: sandboxMediaDownloadOptions(sandbox.descriptor) });
    expect(Buffer.compare(downloaded, bytes)).toBe(0);
  });

  it('logs no Baileys errors', ({ linked: { alice, bob } }) => {
    expect(alice.unexpectedErrors).toEqual([]);
    expect(bob.unexpectedErrors).toEqual([]);
  });
});
