import { queuedPublisher } from '../../../connector/inbound/event-publisher.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyInboundPipeline } from '../../../connector/lazy-inbound.js';
import { networkOptionsFrom } from '../../../connector/network/network-options.js';
import { Ownership } from '../../../connector/ownership/ownership.js';
import { SessionRegistry } from '../../../connector/session/session-registry.js';
import { sessionEvents } from '../../../connector/session/session-events.js';
import { createAccount } from '../../../core/store/accounts.js';
import { findLease } from '../../../core/store/leases.js';
import { registerHeartbeat } from '../../../core/store/heartbeats.js';
import { WaVersionKeeper } from '../../../connector/wa-version/wa-version-keeper.js';
import { silentLogger, useTestStack } from '../../support/test-stack.js';

/**
 * A start racing a hand-over (docs/design.md, Scale-out). The shard balancer gives a shard up
 * while a resume of one of its accounts is between its first check and the session's
 * registration; the hand-over closes only the sessions registered by then. The start must notice
 * and let the account go, or it runs on a connector that no longer owns its shard, its lease
 * held there, and the shard's new owner never starts it. The same for a heartbeat lost midway:
 * the lease was written with an epoch that is dead, so another connector may take the account.
 */
describe('session registry: a start that loses its shard or meets a shutdown midway', () => {
  const ctx = useTestStack();
  const timing = { leaseTtlMs: 30_000, renewEveryMs: 10_000, scanEveryMs: 60_000 };
  const holder: { epoch: string | undefined } = { epoch: 'epoch-1' };
  const ownership = () => new Ownership(ctx.table, 'registry-test:1:aa', timing, holder);
  let waVersion: WaVersionKeeper;
  beforeAll(async () => {
    await registerHeartbeat(ctx.table, 'registry-test:1:aa', 'epoch-1', timing.leaseTtlMs);
    waVersion = await WaVersionKeeper.start({ table: ctx.table, logger: silentLogger });
  });
  afterAll(() => waVersion.stop());

  function registry(isMine: (accountId: string) => boolean, own = ownership()) {
    const { config, clients } = ctx.stack;
    return new SessionRegistry({
      table: ctx.table,
      network: networkOptionsFrom(config),
      ownership: own,
      inbound: lazyInboundPipeline({ config, clients, logger: silentLogger, queues: ctx.queues }),
      logger: silentLogger,
      printTerminalQr: () => undefined,
      events: sessionEvents(queuedPublisher(ctx.queues), silentLogger),
      waVersion,
      isMine,
    });
  }

  it('the shard given up during the start: no session, the lease released at once', async () => {
    await createAccount(ctx.table, { id: 'racing', collectionName: 'auth_racing', status: 'reconnecting' });
    // Mine when the start begins, given up while it reads the account and takes the lease.
    let checks = 0;
    const sessions = registry(() => ++checks === 1);
    expect(await sessions.start('racing', 'resume')).toBe('owned_elsewhere');
    expect(checks).toBeGreaterThanOrEqual(2);
    expect(sessions.accountIds()).toEqual([]);
    expect(await findLease(ctx.table, 'racing')).toBeUndefined();
  });

  it('a shutdown begun during the start: no session, the lease released', async () => {
    await createAccount(ctx.table, { id: 'closing', collectionName: 'auth_closing', status: 'reconnecting' });
    let sessions: SessionRegistry | undefined;
    sessions = registry(() => {
      sessions?.haltReconnects();
      return true;
    });
    expect(await sessions.start('closing', 'resume')).toBe('owned_elsewhere');
    expect(sessions.accountIds()).toEqual([]);
    expect(await findLease(ctx.table, 'closing')).toBeUndefined();
  });

  it('the heartbeat lost during the start: no session (the drop has passed it by), the lease released', async () => {
    await createAccount(ctx.table, { id: 'orphaned', collectionName: 'auth_orphaned', status: 'reconnecting' });
    // Lost while the start takes the lease: the lease's epoch is dead to the others from then on.
    let checks = 0;
    const sessions = registry(() => {
      if (++checks === 2) holder.epoch = undefined;
      return true;
    });
    try {
      expect(await sessions.start('orphaned', 'resume')).toBe('owned_elsewhere');
      expect(checks).toBe(2);
      expect(sessions.accountIds()).toEqual([]);
      expect(await findLease(ctx.table, 'orphaned')).toBeUndefined();
    } finally {
      holder.epoch = 'epoch-1';
    }
  });
});
