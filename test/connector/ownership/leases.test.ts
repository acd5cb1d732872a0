import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ownership, type LeaseHolder } from '../../../connector/ownership/ownership.js';
import { beat, declareDead, listHeartbeats, registerHeartbeat } from '../../../core/store/heartbeats.js';
import { leaseKey } from '../../../core/keys.js';
import { findLease, findLeases, isLeaseHeld, releaseLease } from '../../../core/store/leases.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { countedTable } from '../../support/counted-table.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

/**
 * Account leases held by their owner's heartbeat (core/store/leases.ts): a live heartbeat keeps
 * every lease of its epoch; an expired one is declared dead before its leases are taken, and
 * its owner's beats fail from then on.
 */
describe('account ownership leases', () => {
  let stack: TestStack;
  let table: Table;
  const TTL = 20_000;
  const timing = { leaseTtlMs: TTL, renewEveryMs: 5_000, scanEveryMs: 5_000 };
  const holder = (epoch: string | undefined): LeaseHolder => ({ epoch });
  const ownershipOf = (owner: string, epoch: string) => new Ownership(table, owner, timing, holder(epoch));

  beforeAll(async () => {
    stack = await startTestStack();
    table = tableOf(stack.config, stack.clients);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('a live heartbeat keeps its leases: a second owner stays out, however long ago the lease was taken', async () => {
    await registerHeartbeat(table, 'A1', 'a1-e1', TTL);
    await registerHeartbeat(table, 'B1', 'b1-e1', TTL);
    const a = ownershipOf('A1', 'a1-e1');
    const b = ownershipOf('B1', 'b1-e1');
    expect(await a.acquire('acc1', 'a1-e1')).toBe(true);
    expect(await b.acquire('acc1', 'b1-e1')).toBe(false);
    expect(await b.ownedElsewhere('acc1')).toBe(true);
    expect(await a.ownedElsewhere('acc1')).toBe(false);
    expect(await b.unowned(['acc1', 'free1'])).toEqual(['free1']);
    // Only the heartbeat is written: the lease itself is never renewed.
    expect(await beat(table, 'A1', 'a1-e1', TTL)).toBe(true);
    expect(await findLease(table, 'acc1')).toEqual({ accountId: 'acc1', owner: 'A1', epoch: 'a1-e1' });
  });

  it('an expired heartbeat is declared dead and its lease taken over; its owner can no longer beat', async () => {
    await registerHeartbeat(table, 'A2', 'a2-e1', TTL, Date.now() - TTL - 1_000);
    await registerHeartbeat(table, 'B2', 'b2-e1', TTL);
    const b = ownershipOf('B2', 'b2-e1');
    expect(await ownershipOf('A2', 'a2-e1').acquire('acc2', 'a2-e1')).toBe(true);
    expect(await b.unowned(['acc2'])).toEqual(['acc2']);
    expect(await b.acquire('acc2', 'b2-e1')).toBe(true);
    expect(await findLease(table, 'acc2')).toMatchObject({ owner: 'B2', epoch: 'b2-e1' });
    expect(await beat(table, 'A2', 'a2-e1', TTL)).toBe(false);
  });

  it("a dead connector's many leases are taken over with one declaration of its heartbeat", async () => {
    await registerHeartbeat(table, 'A8', 'a8-e1', TTL, Date.now() - TTL - 1_000);
    await registerHeartbeat(table, 'B8', 'b8-e1', TTL);
    const accounts = ['acc8a', 'acc8b', 'acc8c'];
    for (const accountId of accounts) expect(await ownershipOf('A8', 'a8-e1').acquire(accountId, 'a8-e1')).toBe(true);
    const counted = countedTable(stack.config);
    try {
      const b = new Ownership(counted.table, 'B8', timing, holder('b8-e1'));
      for (const accountId of accounts) expect(await b.acquire(accountId, 'b8-e1')).toBe(true);
      // One DeleteItem (the declaration); each lease: the refused put, the read, the put that replaces it.
      expect(counted.counts.get('DeleteItemCommand')).toBe(1);
      expect(counted.counts.get('PutItemCommand')).toBe(2 * accounts.length);
      expect(counted.counts.get('GetItemCommand')).toBe(accounts.length);
    } finally {
      counted.close();
    }
  });

  it('a beat that lands before the declaration keeps the owner alive: the declaration fails, the lease stays', async () => {
    const expiredAt = Date.now() - 1_000;
    await registerHeartbeat(table, 'A3', 'a3-e1', TTL, expiredAt - TTL);
    expect(await ownershipOf('A3', 'a3-e1').acquire('acc3', 'a3-e1')).toBe(true);
    expect(await beat(table, 'A3', 'a3-e1', TTL)).toBe(true);
    expect(await declareDead(table, 'A3', 'a3-e1')).toBe(false);
    await registerHeartbeat(table, 'B3', 'b3-e1', TTL);
    expect(await ownershipOf('B3', 'b3-e1').acquire('acc3', 'b3-e1')).toBe(false);
    expect((await findLease(table, 'acc3'))?.owner).toBe('A3');
  });

  it('a heartbeat registered again (a new epoch) leaves the old epoch dead: the owner takes its own lease back, or another one takes it', async () => {
    await registerHeartbeat(table, 'A4', 'a4-e1', TTL);
    const first = ownershipOf('A4', 'a4-e1');
    expect(await first.acquire('acc4', 'a4-e1')).toBe(true);
    expect(await first.acquire('acc4b', 'a4-e1')).toBe(true);
    await registerHeartbeat(table, 'A4', 'a4-e2', TTL);
    const second = ownershipOf('A4', 'a4-e2');
    expect(await second.unowned(['acc4', 'acc4b'])).toEqual(['acc4', 'acc4b']);
    expect(await second.acquire('acc4', 'a4-e2')).toBe(true);
    expect((await findLease(table, 'acc4'))?.epoch).toBe('a4-e2');
    // Another connector sees the old epoch dead (the heartbeat names a later one) without waiting.
    await registerHeartbeat(table, 'B4', 'b4-e1', TTL);
    const b = ownershipOf('B4', 'b4-e1');
    expect(isLeaseHeld(await findLease(table, 'acc4b'), await listHeartbeats(table))).toBe(false);
    expect(await b.acquire('acc4', 'b4-e1')).toBe(false);
    expect(await b.acquire('acc4b', 'b4-e1')).toBe(true);
    expect(await beat(table, 'A4', 'a4-e2', TTL)).toBe(true);
  });

  it('a lease of the older kind (its own expiry, no epoch) is kept until it expires, then taken', async () => {
    await registerHeartbeat(table, 'B5', 'b5-e1', TTL);
    const b = ownershipOf('B5', 'b5-e1');
    const older = (accountId: string, leaseExpiresAt: number) =>
      table.doc.send(new PutCommand({ TableName: table.name, Item: { ...leaseKey(accountId), accountId, owner: 'OLD', leaseExpiresAt } }));
    await older('acc5live', Date.now() + TTL);
    await older('acc5gone', Date.now() - 1);
    expect(await b.unowned(['acc5live', 'acc5gone'])).toEqual(['acc5gone']);
    expect(await b.acquire('acc5live', 'b5-e1')).toBe(false);
    expect(await b.acquire('acc5gone', 'b5-e1')).toBe(true);
  });

  it('release frees the lease at once; releasing a lease not held changes nothing', async () => {
    await registerHeartbeat(table, 'A6', 'a6-e1', TTL);
    await registerHeartbeat(table, 'B6', 'b6-e1', TTL);
    expect(await ownershipOf('A6', 'a6-e1').acquire('acc6', 'a6-e1')).toBe(true);
    await releaseLease(table, 'acc6', 'B6');
    expect((await findLease(table, 'acc6'))?.owner).toBe('A6');
    await releaseLease(table, 'acc6', 'A6');
    expect(await findLease(table, 'acc6')).toBeUndefined();
    expect(await ownershipOf('B6', 'b6-e1').acquire('acc6', 'b6-e1')).toBe(true);
  });

  it('leases of many accounts are read in one go', async () => {
    await registerHeartbeat(table, 'A7', 'a7-e1', TTL);
    await ownershipOf('A7', 'a7-e1').acquire('acc7', 'a7-e1');
    const leases = await findLeases(table, ['acc7', 'nobody']);
    expect(leases.get('acc7')?.owner).toBe('A7');
    expect(leases.has('nobody')).toBe(false);
  });
});
