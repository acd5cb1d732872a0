import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { downloadMediaMessage } from '@whiskeysockets/baileys';
import { sandboxMediaDownloadOptions } from '../../sandbox/client.js';
import { sandboxDataDir } from './support/data-dir-sandbox.js';
import { linkClient } from './support/sandbox-client.js';

describe('sandbox: restart with a data directory', () => {
  const { dataDir, clients, start } = sandboxDataDir('sandbox-restart-');

  it('keeps its keys, ports, linked devices (no new QR), queued messages and media', async () => {
    let sandbox = await start({ port: 0 });
    const written = JSON.parse(readFileSync(join(dataDir, 'sandbox.json'), 'utf8')) as unknown;
    expect(written).toEqual(sandbox.descriptor);
    expect(sandbox.descriptor.rootPublicKey).toMatch(/^[0-9a-f]{64}$/);

    const alice = await linkClient(sandbox, '15550006001');
    const bob = await linkClient(sandbox, '15550006002');
    clients.push(alice, bob);
    await bob.stop();
    const queued = await alice.sock!.sendMessage(bob.userJid, { text: 'survives a restart' });
    const picture = randomBytes(50_000);
    const queuedImage = await alice.sock!.sendMessage(bob.userJid, { image: picture, mimetype: 'image/jpeg', jpegThumbnail: '' });
    await alice.stop();
    const before = sandbox.descriptor;
    await sandbox.stop();

    sandbox = await start({ reusePorts: true });
    expect(sandbox.descriptor).toEqual(before);
    const aliceOpens = alice.openCount;
    const bobOpens = bob.openCount;
    alice.qr = undefined;
    bob.qr = undefined;
    alice.start(sandbox.descriptor);
    bob.start(sandbox.descriptor);
    await alice.waitForOpen(aliceOpens + 1);
    await bob.waitForOpen(bobOpens + 1);
    expect(alice.qr).toBeUndefined();
    expect(bob.qr).toBeUndefined();

    const got = await bob.waitForMessage((m) => m.key.id === queued!.key.id, 'the queued message');
    expect(got.message?.conversation ?? got.message?.extendedTextMessage?.text).toBe('survives a restart');
    const image = await bob.waitForMessage((m) => m.key.id === queuedImage!.key.id, 'the queued image');
    const downloaded = await downloadMediaMessage(image, 'buffer', { options: sandboxMediaDownloadOptions(sandbox.descriptor) });
    expect(Buffer.compare(downloaded, picture)).toBe(0);
    const reply = await bob.sock!.sendMessage(alice.userJid, { text: 'after restart' });
    await alice.waitForMessage((m) => m.key.id === reply!.key.id, 'a message after restart');
    expect(alice.unexpectedErrors).toEqual([]);
    expect(bob.unexpectedErrors).toEqual([]);
  });
});
