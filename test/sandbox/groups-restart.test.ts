import { describe, expect, it } from 'vitest';
import { sandboxDataDir } from './support/data-dir-sandbox.js';
import { linkClient } from './support/sandbox-client.js';

describe('sandbox: groups survive a restart with a data directory', () => {
  const { clients, start } = sandboxDataDir('sandbox-groups-restart-');

  it('keeps subject, members and roles, and the group message queued for an offline member', async () => {
    let sandbox = await start({ port: 0 });
    const alice = await linkClient(sandbox, '15550007101');
    const bob = await linkClient(sandbox, '15550007102');
    clients.push(alice, bob);
    const group = await alice.sock!.groupCreate('Kept', [bob.userJid]);
    await alice.sock!.groupParticipantsUpdate(group.id, [bob.userJid], 'promote');
    await bob.stop();
    const queued = await alice.sock!.sendMessage(group.id, { text: 'while you were away' });
    await alice.stop();
    await sandbox.stop();

    sandbox = await start({ reusePorts: true });
    const opens = bob.openCount;
    bob.start(sandbox.descriptor);
    await bob.waitForOpen(opens + 1);
    const got = await bob.waitForMessage((m) => m.key.id === queued!.key.id, 'the queued group message');
    expect(got.message?.conversation ?? got.message?.extendedTextMessage?.text).toBe('while you were away');
    const meta = await bob.sock!.groupMetadata(group.id);
    expect(meta.subject).toBe('Kept');
    expect(new Map(meta.participants.map((p) => [p.id, p.admin]))).toEqual(
      new Map([
        [alice.userJid, 'superadmin'],
        [bob.userJid, 'admin'],
      ]),
    );
    expect(bob.unexpectedErrors).toEqual([]);
  });
});
