import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsPerShard } from '../../../connector/ownership/fair-share.js';
import { startShardBalancer, type ShardBalancer } from '../../../connector/ownership/shard-balancer.js';
import { ConnectorHeartbeat } from '../../../connector/ownership/heartbeat.js';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { signalKeyFormatOf } from '../../../core/store/auth-state.js';
import { listShardLeases } from '../../../core/store/shard-leases.js';
import { listHeartbeats } from '../../../core/store/heartbeats.js';
import { connectorKey } from '../../../core/keys.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';

/**
 * Shard balancers against the DynamoDB emulator, as several connectors run them (docs/design.md,
 * Scale-out): 300 accounts over 32 shards, balanced by accounts; joins and graceful stops hand
 * shards to a named heir. The hand-over callbacks only record (no sessions: the e2e scale suite
 * runs those).
 */
const SHARDS = 32;
const weights = accountsPerShard(
  Array.from({ length: 300 }, (_, n) => `account-${n}`),
  SHARDS,
);

interface Member {
  id: string;
  owned: Set<number>;
  balancer: ShardBalancer;
  heartbeat: ConnectorHeartbeat;
  acquired: number[];
  released: number[];
  /** Given up because the heartbeat that held them was lost. */
  lost: number[];
  /** The round period, read at each round: a test lengthens it to see what a wake-up alone does. */
  timing: { everyMs: number };
  /** Rounds that listed every account (only while some shard had no count on its lease). */
  listings: number;
}

describe('shard balancers sharing one table', () => {
  let stack: TestStack;
  let table: Table;
  const members: Member[] = [];

  async function join(id: string): Promise<Member> {
    const owned = new Set<number>();
    const heartbeat = await ConnectorHeartbeat.start({
      table,
      connectorId: id,
      ttlMs: 3_000,
      everyMs: 100,
      logger: silentLogger,
    });
    const timing = { everyMs: 100 };
    const member: Member = {
      id,
      owned,
      acquired: [],
      released: [],
      lost: [],
      timing,
      listings: 0,
      heartbeat,
      balancer: undefined as unknown as ShardBalancer,
    };
    members.push(member);
    member.balancer = await startShardBalancer({
      table,
      ownerId: id,
      heartbeat,
      shardCount: SHARDS,
      get everyMs() {
        return timing.everyMs;
      },
      logger: silentLogger,
      // The wake-up the connector sends through the shard's command queue (core/queues.ts), reaching its poller.
      async wakeHolderOf(shard) {
        members.find((other) => other.owned.has(shard))?.balancer.wake();
      },
      // Each held shard's accounts run here as soon as it is acquired.
      running: () => new Map([...owned].map((shard) => [shard, weights[shard]!])),
      async listRunning() {
        member.listings += 1;
        return weights;
      },
      owned,
      async onAcquired(shards) {
        member.acquired.push(...shards);
      },
      async onReleasing(shard, lost) {
        member.released.push(shard);
        if (lost) member.lost.push(shard);
      },
    });
    return member;
  }

  const accountsOf = (member: Member) => [...member.owned].reduce((sum, shard) => sum + weights[shard]!, 0);

  /** Waits until the members own every shard once, each within ±10 % of the mean, and it stays so for a few rounds. */
  async function waitForBalance(live: Member[]): Promise<void> {
    const mean = 300 / live.length;
    const balanced = () => {
      const held = live.flatMap((member) => [...member.owned]);
      return held.length === SHARDS && new Set(held).size === SHARDS && live.every((m) => Math.abs(accountsOf(m) - mean) <= 0.1 * mean);
    };
    await waitFor(`${live.length} connectors balanced by accounts`, balanced, { timeoutMs: 30_000 });
    // Settled: a few more rounds of everyone change nothing.
    const snapshot = live.map((member) => [...member.owned].sort((a, b) => a - b));
    const rounds = live.map((member) => member.balancer.rounds);
    await waitFor('three more rounds of each', () => live.every((member, index) => member.balancer.rounds >= rounds[index]! + 3));
    expect(live.map((member) => [...member.owned].sort((a, b) => a - b))).toEqual(snapshot);
  }

  beforeAll(async () => {
    stack = await startTestStack();
    table = tableOf(stack.config, stack.clients);
  });
  afterAll(async () => {
    for (const member of members) {
      await member.balancer.stop();
      await member.heartbeat.stop();
    }
    await stack?.stop();
  });

  it('three connectors: every one within ±10 % of the mean accounts', async () => {
    await join('A');
    expect(members[0]!.owned.size).toBe(SHARDS);
    await Promise.all([join('B'), join('C')]);
    await waitForBalance(members);
  });

  it('a fourth joins: it receives its share, and only a few shards move; no round lists the accounts once every shard is counted', async () => {
    const before = members.map((member) => member.released.length);
    const listings = members.map((member) => member.listings);
    const newcomer = await join('D');
    await waitForBalance(members);
    // The counts on the leases are what everyone balances by.
    expect(members.map((member) => member.listings)).toEqual([...listings, 0]);
    expect((await listShardLeases(table)).map((lease) => lease.running)).toEqual(weights);
    const moved = members.reduce((sum, member, index) => sum + member.released.length - (before[index] ?? 0), 0);
    expect(accountsOf(newcomer)).toBeGreaterThan(0);
    expect(moved).toBeLessThanOrEqual(12);
  });

  it('a graceful stop hands each shard to its heir: the others take them, and keep their own', async () => {
    const leaving = members.find((member) => member.id === 'B')!;
    const staying = members.filter((member) => member !== leaving);
    const kept = new Map(staying.map((member) => [member.id, new Set(member.owned)]));
    const orphans = [...leaving.owned];
    await leaving.balancer.stop();
    expect(leaving.owned.size).toBe(0);
    // Right after the stop every shard of the leaver is handed to an heir among the others, or taken by it already.
    const handed = (await listShardLeases(table)).filter((lease) => orphans.includes(lease.shard));
    expect(handed).toHaveLength(orphans.length);
    for (const lease of handed) expect(['A', 'C', 'D']).toContain(lease.owner || lease.heir);
    members.splice(members.indexOf(leaving), 1);
    // The leaver's heartbeat still beats (marked leaving, as while its sockets close): the others plan without it.
    await waitForBalance(staying);
    await leaving.heartbeat.stop();
    const reshuffled = staying.flatMap((member) => [...kept.get(member.id)!].filter((shard) => !member.owned.has(shard)));
    expect(reshuffled.length).toBeLessThanOrEqual(2);
    for (const shard of orphans) expect(staying.some((member) => member.owned.has(shard))).toBe(true);
  });

  it('a heartbeat declared dead: its connector gives every shard up at once, and every shard is held again', async () => {
    const victim = members.find((member) => member.id === 'A')!;
    const held = [...victim.owned];
    const epoch = victim.heartbeat.epoch;
    expect(held.length).toBeGreaterThan(0);
    // What a takeover does to an expired heartbeat (here without waiting for it to expire).
    await table.doc.send(new DeleteCommand({ TableName: table.name, Key: connectorKey('A') }));
    await waitFor('every shard of the victim given up as lost', () => held.every((shard) => victim.lost.includes(shard)));
    await waitForBalance(members);
    expect(victim.heartbeat.epoch).not.toBe(epoch);
    // Whoever holds a shard now holds it under its live epoch.
    const heartbeats = await listHeartbeats(table);
    for (const lease of await listShardLeases(table)) expect(lease.until).toBeGreaterThanOrEqual(Date.now() - 1_000);
    expect(heartbeats.get('A')?.epoch).toBe(victim.heartbeat.epoch);
  });

  it('sessions are stored deflated only while every live connector reads them so: a connector from before turns it off until it is gone', async () => {
    const format = signalKeyFormatOf(table);
    await waitFor('deflated sessions, every connector reading them', () => format.deflateSessions);
    // A connector of the version before, leaving (so nobody plans shards for it): its heartbeat names no formats.
    const until = Date.now() + 60_000;
    await table.doc.send(
      new PutCommand({ TableName: table.name, Item: { ...connectorKey('older'), connectorId: 'older', epoch: 'e', until, leaving: true } }),
    );
    await waitFor('plain sessions while the older connector lives', () => !format.deflateSessions);
    await table.doc.send(new DeleteCommand({ TableName: table.name, Key: connectorKey('older') }));
    await waitFor('deflated sessions again once it is gone', () => format.deflateSessions);

    // One started with SIGNAL_SESSIONS_PLAIN (before a roll-back) announces none: plain for everyone.
    const plain = await ConnectorHeartbeat.start({
      table,
      connectorId: 'plain',
      ttlMs: 3_000,
      everyMs: 100,
      logger: silentLogger,
      reads: [],
    });
    await plain.markLeaving();
    try {
      expect((await listHeartbeats(table)).get('plain')?.reads).toEqual([]);
      await waitFor('plain sessions while it lives', () => !format.deflateSessions);
    } finally {
      await plain.stop();
    }
    await waitFor('deflated sessions once it stopped', () => format.deflateSessions);
  });

  it('a graceful stop wakes the heirs: they take its shards at once, not at their next round', async () => {
    // Rounds ten minutes apart from now on: only a wake-up can move a shard within the wait below.
    for (const member of members) member.timing.everyMs = 600_000;
    const rounds = members.map((member) => member.balancer.rounds);
    await waitFor('a round of each with the long period scheduled', () =>
      members.every((member, index) => member.balancer.rounds > rounds[index]!),
    );
    const leaving = members.find((member) => member.owned.size > 0 && member.id !== 'A')!;
    const staying = members.filter((member) => member !== leaving);
    const orphans = [...leaving.owned];
    await leaving.balancer.stop();
    members.splice(members.indexOf(leaving), 1);
    await waitFor("the leaver's shards taken by the others", () => orphans.every((shard) => staying.some((m) => m.owned.has(shard))), {
      timeoutMs: 30_000,
    });
    await leaving.heartbeat.stop();
  });
});
