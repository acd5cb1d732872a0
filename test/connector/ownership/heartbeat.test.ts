import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorHeartbeat } from '../../../connector/ownership/heartbeat.js';
import { accountKey, connectorKey, leaseKey } from '../../../core/keys.js';
import { declareDead, listHeartbeats } from '../../../core/store/heartbeats.js';
import { findLease } from '../../../core/store/leases.js';
import { findMessage } from '../../../core/store/messages.js';
import { connectByCommand, sendTextByCommand } from '../../e2e/support/commands.js';
import { startGateway, type Gateway } from '../../e2e/support/gateway.js';
import { silentLogger, useTestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';

/**
 * The heartbeat that holds a connector's account leases (connector/ownership/heartbeat.ts): its
 * epoch ends when another connector declares it dead or when a beat does not land in time, and
 * the connector then drops every socket before anyone may take one over.
 */
describe('connector heartbeat', () => {
  const ctx = useTestStack();
  const started: ConnectorHeartbeat[] = [];
  afterAll(async () => {
    for (const heartbeat of started) await heartbeat.stop();
  });

  async function startHeartbeat(connectorId: string, ttlMs: number, everyMs: number) {
    const lost: string[] = [];
    const heartbeat = await ConnectorHeartbeat.start({
      table: ctx.table,
      connectorId,
      ttlMs,
      everyMs,
      logger: silentLogger,
    });
    heartbeat.onLost((why) => lost.push(why));
    started.push(heartbeat);
    return { heartbeat, lost };
  }

  it('declared dead by another connector: lost at the next beat, then registered again under a new epoch', async () => {
    const { heartbeat, lost } = await startHeartbeat('hb-declared', 400, 100);
    const first = heartbeat.epoch;
    expect(first).toBeDefined();
    // What a takeover does once the heartbeat has expired (here without waiting: the record is removed).
    await ctx.table.doc.send(new DeleteCommand({ TableName: ctx.table.name, Key: connectorKey('hb-declared') }));
    await waitFor('the loss to be noticed', () => lost.length === 1);
    expect(lost).toEqual(['declared dead by another connector']);
    const second = await waitFor('a new epoch', () => heartbeat.epoch);
    expect(second).not.toBe(first);
    expect((await listHeartbeats(ctx.table)).get('hb-declared')?.epoch).toBe(second);
  });

  it('a beat that cannot land before the last one runs out (the event loop stalled): lost, even though nobody declared it dead', async () => {
    const { heartbeat, lost } = await startHeartbeat('hb-stalled', 600, 100);
    const first = heartbeat.epoch!;
    const stallUntil = Date.now() + 900;
    while (Date.now() < stallUntil) {
      // A long pause of the process, as a full collection of a large heap can be.
    }
    await waitFor('the loss to be noticed', () => lost.length === 1);
    expect(lost).toEqual(['not extended in time']);
    const second = await waitFor('a new epoch', () => heartbeat.epoch);
    expect(second).not.toBe(first);
    // The old epoch is dead to the others at once: its leases are free.
    expect(await declareDead(ctx.table, 'hb-stalled', first)).toBe(true);
  });

  it('a stop removes the heartbeat', async () => {
    const { heartbeat } = await startHeartbeat('hb-stopped', 5_000, 1_000);
    expect((await listHeartbeats(ctx.table)).has('hb-stopped')).toBe(true);
    await heartbeat.stop();
    expect((await listHeartbeats(ctx.table)).has('hb-stopped')).toBe(false);
  });
});

describe('sessions under leases held by the heartbeat', { timeout: 120_000 }, () => {
  let gw: Gateway;
  const alice = { id: 'hbalice', phone: '15550300001' };
  const bob = { id: 'hbbob', phone: '15550300002' };

  beforeAll(async () => {
    // Quick scans; leases long enough that a busy machine does not lose them between renewals
    // (neither case below waits for a lease to run out).
    gw = await startGateway({ ownership: { scanEveryMs: 500, renewEveryMs: 500, leaseTtlMs: 20_000 } });
    await connectByCommand(gw, alice);
    await connectByCommand(gw, bob);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('a heartbeat declared dead: every socket closes at once, then the accounts run again under the new epoch, one socket each', async () => {
    const epochBefore = (await findLease(gw.table, alice.id))?.epoch;
    expect(epochBefore).toBeDefined();
    const from = gw.logs.lines.length;
    await gw.table.doc.send(new DeleteCommand({ TableName: gw.table.name, Key: connectorKey(gw.connector.ownerId) }));
    // The heartbeat's own line: the shard balancer may notice first (its shard lease went with
    // the epoch) and close the sessions before the heartbeat's listener finds any left.
    await waitFor(
      'the loss in the log',
      () => gw.logs.linesSince(from, (l) => l.msg === 'heartbeat lost: closing every socket here, then registering again').length > 0,
    );
    const epochAfter = await waitFor('both accounts leased again under a new epoch', async () => {
      const heartbeat = (await listHeartbeats(gw.table)).get(gw.connector.ownerId);
      const [a, b] = await Promise.all([findLease(gw.table, alice.id), findLease(gw.table, bob.id)]);
      const renewed = heartbeat?.epoch !== undefined && heartbeat.epoch !== epochBefore;
      return renewed && a?.epoch === heartbeat.epoch && b?.epoch === heartbeat.epoch ? heartbeat.epoch : undefined;
    });
    expect(epochAfter).not.toBe(epochBefore);
    await waitFor('both sessions connected again', () =>
      [alice.id, bob.id].every((id) => gw.connector.registry.get(id)?.status === 'connected'),
    );
    await waitFor('two sockets online, one per account', () => gw.sandbox.core.network.onlineCount() === 2);
    const { messageId, outbound } = await sendTextByCommand(gw, alice.id, `${bob.phone}@s.whatsapp.net`, 'after the heartbeat came back');
    expect(outbound.status).toBe('sent');
    await waitFor('bob to receive it', () => findMessage(gw.table, bob.id, messageId));
  });

  it('an account deleted while its session runs, without the command that ends it: the scan closes the socket', async () => {
    // What the API's deletion does to the table (core/store/account-deletion.ts), here without its `delete_account` command.
    await gw.table.doc.send(new DeleteCommand({ TableName: gw.table.name, Key: accountKey(bob.id) }));
    await gw.table.doc.send(new DeleteCommand({ TableName: gw.table.name, Key: leaseKey(bob.id) }));
    await waitFor('the session to be closed', () => gw.connector.registry.get(bob.id) === undefined);
    await waitFor('one socket left', () => gw.sandbox.core.network.onlineCount() === 1);
    await waitFor('alice still connected', () => gw.connector.registry.get(alice.id)?.status === 'connected');
    expect(gw.logs.lines.some((l) => l.msg === 'account deleted without its session being ended: closing the socket here')).toBe(true);
  });
});
