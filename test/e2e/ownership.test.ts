import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findLease } from '../../core/store/leases.js';
import { findMessage } from '../../core/store/messages.js';
import type { Connector } from '../../connector/connector.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { connectByCommand, sendTextByCommand } from './support/commands.js';
import { waitFor } from '../support/wait.js';

/**
 * Restart and ownership: a restarted connector resumes linked accounts without a QR; a second
 * connector on the same table never opens a second socket for an account, and takes the
 * accounts over once the first connector dies (its leases expire).
 */
// Generous: takeover waits for a lease to expire, and a child process starts under tsx.
describe('connector restart and account ownership', { timeout: 180_000 }, () => {
  let gw: Gateway;
  let child: ChildConnector | undefined;
  let extra: Connector | undefined;
  const alice = { id: 'ownalice', phone: '15550200001' };
  const bob = { id: 'ownbob', phone: '15550200002' };

  beforeAll(async () => {
    gw = await startGateway({ ownership: { scanEveryMs: 1_000, renewEveryMs: 2_000, leaseTtlMs: 10_000 } });
    await connectByCommand(gw, alice);
    await connectByCommand(gw, bob);
  });
  afterAll(async () => {
    await child?.kill();
    await gw?.stop();
  });

  it('restart: both accounts resume from stored creds with no new QR', async () => {
    const from = gw.logs.lines.length;
    await gw.restartConnector();
    await gw.waitForStatus(alice.id, 'connected');
    await gw.waitForStatus(bob.id, 'connected');
    expect(gw.logs.linesSince(from, (l) => l.event === 'qr')).toEqual([]);
    const { messageId, outbound } = await sendTextByCommand(gw, alice.id, `${bob.phone}@s.whatsapp.net`, 'after restart');
    expect(outbound.status).toBe('sent');
    await waitFor('bob to receive it', () => findMessage(gw.table, bob.id, messageId));
  });

  it('a second connector does not open a second socket while the first one lives', async () => {
    await gw.stopConnector();
    child = spawnConnector(gw.env);
    const childOwner = `:${child.pid}:`;
    await waitFor('the child connector to own both accounts', async () => {
      const [a, b] = await Promise.all([findLease(gw.table, alice.id), findLease(gw.table, bob.id)]);
      return Boolean(a?.owner.includes(childOwner) && b?.owner.includes(childOwner));
    });
    await gw.waitForStatus(alice.id, 'connected');
    await gw.waitForStatus(bob.id, 'connected');

    const { connector: second } = await gw.startExtraConnector();
    extra = second;
    await second.registry.waitForScans(3);
    expect(second.registry.accountIds()).toEqual([]);
    expect((await findLease(gw.table, alice.id))?.owner).toContain(childOwner);
    expect(gw.sandbox.core.network.onlineCount()).toBe(2);

    // Either connector may receive the command; the one that does not own the account hands it back.
    const { messageId, outbound } = await sendTextByCommand(gw, alice.id, `${bob.phone}@s.whatsapp.net`, 'while two connectors run');
    expect(outbound.status).toBe('sent');
    await waitFor('bob to receive it', () => findMessage(gw.table, bob.id, messageId));
    expect(second.registry.accountIds()).toEqual([]);
  });

  it('when the first connector dies, the second takes its accounts over', async () => {
    const second = extra!;
    const diedAt = Date.now();
    await child!.kill();
    const takeoverOwner = await waitFor(
      'the accounts to be taken over',
      async () => {
        const [a, b] = await Promise.all([findLease(gw.table, alice.id), findLease(gw.table, bob.id)]);
        return a && b && a.owner === b.owner && !a.owner.includes(`:${child!.pid}:`) ? a.owner : undefined;
      },
      { timeoutMs: 45_000 },
    );
    await gw.waitForStatus(alice.id, 'connected');
    await gw.waitForStatus(bob.id, 'connected');
    console.info(`takeover after ${Date.now() - diedAt} ms by ${takeoverOwner}`);
    expect(takeoverOwner).toBe(second.ownerId);
    expect(second.registry.accountIds().sort()).toEqual([alice.id, bob.id].sort());
    expect(gw.sandbox.core.network.onlineCount()).toBe(2);

    const { messageId, outbound } = await sendTextByCommand(gw, bob.id, `${alice.phone}@s.whatsapp.net`, 'after takeover');
    expect(outbound.status).toBe('sent');
    await waitFor('alice to receive it', () => findMessage(gw.table, alice.id, messageId));
  });

  it('SIGTERM: the connector process closes its sockets, releases its leases and exits 0', async () => {
    await extra!.stop();
    expect(await findLease(gw.table, alice.id)).toBeUndefined();
    await gw.waitForStatus(alice.id, 'reconnecting');

    child = spawnConnector(gw.env);
    const childOwner = `:${child.pid}:`;
    await waitFor('the new process to own alice', async () => (await findLease(gw.table, alice.id))?.owner.includes(childOwner));
    await gw.waitForStatus(alice.id, 'connected');
    await gw.waitForStatus(bob.id, 'connected');

    expect(await child.terminate()).toBe(0);
    expect(await findLease(gw.table, alice.id)).toBeUndefined();
    expect(await findLease(gw.table, bob.id)).toBeUndefined();
    await gw.waitForStatus(alice.id, 'reconnecting', 5_000);
  });
});
