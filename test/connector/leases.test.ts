import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireLease, findLease, findLeases, releaseLease, renewLease } from '../../core/store/leases.js';
import { tableOf, type Table } from '../../core/store/table.js';
import { startTestStack, type TestStack } from '../support/test-stack.js';

describe('account ownership leases', () => {
  let stack: TestStack;
  let table: Table;

  beforeAll(async () => {
    stack = await startTestStack();
    table = tableOf(stack.config, stack.clients);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('a live lease keeps a second owner out; renewal by the holder works', async () => {
    const now = 1_000_000;
    expect(await acquireLease(table, 'acc1', 'A', 20_000, now)).toBe(true);
    expect(await acquireLease(table, 'acc1', 'B', 20_000, now + 1_000)).toBe(false);
    expect(await renewLease(table, 'acc1', 'B', 20_000, now + 1_000)).toBe(false);
    expect(await renewLease(table, 'acc1', 'A', 20_000, now + 10_000)).toBe(true);
    expect(await acquireLease(table, 'acc1', 'B', 20_000, now + 25_000)).toBe(false);
    expect((await findLease(table, 'acc1'))?.leaseExpiresAt).toBe(now + 30_000);
  });

  it('an expired lease is taken over, and the old holder can no longer renew it', async () => {
    const now = 2_000_000;
    expect(await acquireLease(table, 'acc2', 'A', 20_000, now)).toBe(true);
    expect(await acquireLease(table, 'acc2', 'B', 20_000, now + 20_001)).toBe(true);
    expect(await renewLease(table, 'acc2', 'A', 20_000, now + 20_002)).toBe(false);
    expect((await findLease(table, 'acc2'))?.owner).toBe('B');
  });

  it('release frees the lease at once; releasing a lease not held changes nothing', async () => {
    expect(await acquireLease(table, 'acc3', 'A', 20_000)).toBe(true);
    await releaseLease(table, 'acc3', 'B');
    expect((await findLease(table, 'acc3'))?.owner).toBe('A');
    await releaseLease(table, 'acc3', 'A');
    expect(await findLease(table, 'acc3')).toBeUndefined();
    expect(await acquireLease(table, 'acc3', 'B', 20_000)).toBe(true);
  });

  it('leases of many accounts are read in one go', async () => {
    await acquireLease(table, 'acc4', 'A', 20_000);
    const leases = await findLeases(table, ['acc4', 'nobody']);
    expect(leases.get('acc4')?.owner).toBe('A');
    expect(leases.has('nobody')).toBe(false);
  });
});
