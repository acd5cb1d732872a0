import { describe, expect } from 'vitest';
import { DisconnectReason } from '@whiskeysockets/baileys';
import { waitFor } from '../support/wait.js';
import type { RunningSandbox } from '../../sandbox/index.js';
import { linkClient, linkedDevices, receiptsArrived } from './support/sandbox-client.js';
import { withLinkedPair } from './support/linked-pair.js';

const it = withLinkedPair({ alice: { phone: '15550004001' }, bob: { phone: '15550004002' } });

describe('sandbox: offline delivery and kicks', () => {
  const kick = async (sandbox: RunningSandbox, phone: string, device: number | undefined, kind: string) => {
    const res = await fetch(`${sandbox.descriptor.controlUrl}/kick`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phone, device, kind }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as {
      ok: boolean;
      kicked: boolean;
      unlinked: boolean;
      devices: { device: number; kicked: boolean; unlinked: boolean }[];
    };
  };

  it('queues a message for an offline device and delivers it on reconnect with offline="1"', async ({ linked: { alice, bob } }) => {
    await bob.stop();
    const sent = await alice.sock!.sendMessage(bob.userJid, { text: 'while you were away' });
    const opens = bob.openCount;
    bob.start();
    await bob.waitForOpen(opens + 1);
    const got = await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'queued message');
    expect(got.message?.conversation ?? got.message?.extendedTextMessage?.text).toBe('while you were away');
    expect(bob.upsertTypes.get(sent!.key.id!)).toBe('append');
  });

  it.for<[string, DisconnectReason]>([
    ['restart', DisconnectReason.restartRequired],
    ['conflict', DisconnectReason.connectionReplaced],
    ['end', DisconnectReason.connectionClosed],
  ])('kick %s closes the client with %i and it reconnects', async ([kind, code], { linked: { sandbox, alice, bob } }) => {
    await receiptsArrived(sandbox, '15550004001');
    const opens = alice.openCount;
    const closes = alice.closeCodes.length;
    expect((await kick(sandbox, '15550004001', 1, kind)).kicked).toBe(true);
    await waitFor('the close', () => alice.closeCodes.length > closes, { timeoutMs: 30_000 });
    expect(alice.closeCodes[closes]).toBe(code);
    await alice.waitForOpen(opens + 1);
    const sent = await bob.sock!.sendMessage(alice.userJid, { text: `after ${kind}` });
    await alice.waitForMessage((m) => m.key.id === sent!.key.id, `message after ${kind}`);
  });

  it('kick logout closes with 401, the device is unlinked and the client does not reconnect', async ({ linked: { sandbox, bob } }) => {
    await receiptsArrived(sandbox, '15550004002');
    const opens = bob.openCount;
    const closes = bob.closeCodes.length;
    expect(await kick(sandbox, '15550004002', 1, 'logout')).toMatchObject({ kicked: true, unlinked: true });
    await waitFor('the close', () => bob.closeCodes.length > closes, { timeoutMs: 30_000 });
    expect(bob.closeCodes[closes]).toBe(DisconnectReason.loggedOut);
    const info = (await (await fetch(`${sandbox.descriptor.controlUrl}/phones/15550004002`)).json()) as { devices: unknown[] };
    expect(info.devices).toEqual([]);
    expect(bob.openCount).toBe(opens);

    const refusedAt = bob.closeCodes.length;
    bob.start();
    await waitFor('the refused login', () => bob.closeCodes.length > refusedAt, { timeoutMs: 30_000 });
    expect(bob.closeCodes[refusedAt]).toBe(DisconnectReason.loggedOut);
    expect(bob.openCount).toBe(opens);
  });

  it('kick forbidden closes with 403 (account removed), unlinks the device, and its next login is refused', async ({
    linked: { sandbox },
  }) => {
    const dave = await linkClient(sandbox, '15550004004');
    try {
      const opens = dave.openCount;
      const closes = dave.closeCodes.length;
      expect(await kick(sandbox, '15550004004', 1, 'forbidden')).toMatchObject({
        kicked: true,
        unlinked: true,
        devices: [{ device: 1, kicked: true, unlinked: true }],
      });
      await waitFor('the close', () => dave.closeCodes.length > closes, { timeoutMs: 30_000 });
      expect(dave.closeCodes[closes]).toBe(DisconnectReason.forbidden);
      expect(await linkedDevices(sandbox, '15550004004')).toEqual([]);
      dave.start();
      await waitFor('the refused login', () => dave.closeCodes.length > closes + 1, { timeoutMs: 30_000 });
      expect(dave.closeCodes[closes + 1]).toBe(DisconnectReason.loggedOut);
      expect(dave.openCount).toBe(opens);
    } finally {
      await dave.stop();
    }
  });

  it('a kick without a device closes every linked device of the phone', async ({ linked: { sandbox } }) => {
    const first = await linkClient(sandbox, '15550004005');
    const second = await linkClient(sandbox, '15550004005');
    try {
      const closes = [first.closeCodes.length, second.closeCodes.length];
      const opens = [first.openCount, second.openCount];
      const answer = await kick(sandbox, '15550004005', undefined, 'conflict');
      expect(answer).toMatchObject({ ok: true, kicked: true, unlinked: false });
      expect(answer.devices).toEqual([
        { device: 1, kicked: true, unlinked: false },
        { device: 2, kicked: true, unlinked: false },
      ]);
      for (const [i, client] of [first, second].entries()) {
        await waitFor('the close', () => client.closeCodes.length > closes[i]!, { timeoutMs: 30_000 });
        expect(client.closeCodes[closes[i]!]).toBe(DisconnectReason.connectionReplaced);
        await client.waitForOpen(opens[i]! + 1);
      }
      const answerLogout = await kick(sandbox, '15550004005', undefined, 'logout');
      expect(answerLogout.devices.map((d) => d.unlinked)).toEqual([true, true]);
      expect(await linkedDevices(sandbox, '15550004005')).toEqual([]);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it('a client logging itself out unlinks its device', async ({ linked: { sandbox } }) => {
    const carol = await linkClient(sandbox, '15550004003');
    try {
      await carol.sock!.logout();
      await waitFor('the logout close', () => carol.closeCodes.includes(DisconnectReason.loggedOut), { timeoutMs: 30_000 });
      const info = async () =>
        ((await (await fetch(`${sandbox.descriptor.controlUrl}/phones/15550004003`)).json()) as { devices: unknown[] }).devices;
      await waitFor('the device to be unlinked', async () => (await info()).length === 0, { timeoutMs: 30_000 });
      expect(carol.unexpectedErrors).toEqual([]);
    } finally {
      await carol.stop();
    }
  });

  it('logs no Baileys errors beyond the expected stream errors', ({ linked: { alice, bob } }) => {
    expect(alice.unexpectedErrors).toEqual([]);
    expect(bob.unexpectedErrors).toEqual([]);
  });
});
