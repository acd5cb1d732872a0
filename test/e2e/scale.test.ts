import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOf } from '../../core/shards.js';
import { listShardLeases } from '../../core/store/shard-leases.js';
import { findLease, isLeaseHeld } from '../../core/store/leases.js';
import { listHeartbeats } from '../../core/store/heartbeats.js';
import { findMessage } from '../../core/store/messages.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { connectByCommand, sendTextByCommand, type SandboxAccount } from './support/commands.js';
import { simulatedDelay, waitFor } from '../support/wait.js';

/**
 * Scale-out (docs/design.md, Scale-out) with connector processes: six shards, eight accounts
 * (three in shard 0, one in each other shard), three connectors. An even share of shards would
 * leave one connector with four accounts and two with two; balanced by accounts it is 3, 3, 2.
 * Short leases keep takeovers quick.
 */
const SHARDS = 6;
/**
 * A 12-s lifetime: with the machine overloaded (the suite beside other suites and a benchmark)
 * the emulator once took 3 s per heartbeat write for half a minute, and 6-s heartbeats were lost
 * over and over, every account dropped each time.
 */
const LEASES = { LEASE_TTL_MS: '12000', LEASE_RENEW_MS: '1000', OWNERSHIP_SCAN_MS: '1000' };
/**
 * The sends of the SIGTERM hand-over must not fail: with the machine busy (a benchmark beside the
 * suite) a hand-over once took longer than the default 20-s send deadline, and the test would
 * measure the machine, not the hand-over. What it checks is that no send is lost or failed.
 */
const SEND_DEADLINE = { SEND_TIMEOUT_MS: '60000' };

/** Account ids `scale<n>`: the first three found for shard 0, the first one for each other shard. */
function unevenShards(): SandboxAccount[] {
  const wanted = (shard: number) => (shard === 0 ? 3 : 1);
  const byShard = new Map<number, string[]>();
  for (let n = 0; [...byShard.values()].flat().length < SHARDS + 2; n++) {
    const id = `scale${n}`;
    const shard = shardOf(id, SHARDS);
    const ids = byShard.get(shard) ?? [];
    if (ids.length < wanted(shard)) byShard.set(shard, [...ids, id]);
  }
  return [...byShard.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, ids]) => ids)
    .map((id, index) => ({ id, phone: `15550300${String(index).padStart(3, '0')}` }));
}

describe('scale-out over connector processes', { timeout: 240_000 }, () => {
  let gw: Gateway;
  const accounts = unevenShards();
  const children: ChildConnector[] = [];
  const spawnChild = () => {
    const child = spawnConnector({ ...gw.env, ...LEASES, COMMAND_SHARDS: String(SHARDS) });
    children.push(child);
    return child;
  };
  const jidOf = (account: SandboxAccount) => `${account.phone}@s.whatsapp.net`;

  /** Account ids by the pid in their lease's owner. */
  async function ownersByPid(): Promise<Map<number, string[]>> {
    const owners = new Map<number, string[]>();
    const heartbeats = await listHeartbeats(gw.table);
    for (const account of accounts) {
      const lease = await findLease(gw.table, account.id);
      if (!isLeaseHeld(lease, heartbeats)) continue;
      const pid = Number(lease.owner.split(':')[1]);
      owners.set(pid, [...(owners.get(pid) ?? []), account.id]);
    }
    return owners;
  }

  /** Waits until the live children own every account, as many each as `spread` says (in any order), all connected. */
  async function waitForSpread(live: ChildConnector[], spread: number[]): Promise<Map<number, string[]>> {
    const expected = [...spread].sort((a, b) => a - b);
    let last = new Map<number, string[]>();
    const owners = await waitFor(
      `${accounts.length} accounts spread ${expected.join('/')} over the connectors`,
      async () => {
        last = await ownersByPid();
        const counts = live.map((child) => last.get(child.pid)?.length ?? 0).sort((a, b) => a - b);
        return counts.join() === expected.join() ? last : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    ).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}\n${await spreadReport(live, last)}`);
    });
    for (const account of accounts) await gw.waitForStatus(account.id, 'connected');
    return owners;
  }
  /** What a failed wait saw: account owners, shard leases, and each connector's ownership log. */
  async function spreadReport(live: ChildConnector[], owners: Map<number, string[]>): Promise<string> {
    const now = Date.now();
    const shardLeases = (await listShardLeases(gw.table)).map(
      (lease) => `shard ${lease.shard}: ${lease.owner} (${lease.until - now} ms left${lease.heir ? `, heir ${lease.heir}` : ''})`,
    );
    const logs = live.map((child) => {
      const telling = child.lines.filter(
        (line) => (line.level ?? 0) >= 40 || ['shards acquired', 'shard given up', 'connector started'].includes(line.msg ?? ''),
      );
      const alive = child.process.exitCode === null && child.process.signalCode === null;
      return [`connector pid ${child.pid}${alive ? '' : ' (exited)'}:`, ...telling.slice(-30).map((line) => `  ${JSON.stringify(line)}`)];
    });
    return [`account owners by pid: ${JSON.stringify([...owners])}`, ...shardLeases, ...logs.flat()].join('\n');
  }
  /** What a failed wait for a message saw: every connector's lines that name it, and their warnings and errors. */
  function messageReport(messageId: string): string {
    return children
      .flatMap((child) => [
        `connector pid ${child.pid}:`,
        ...child.lines
          .filter((line) => (line.level ?? 0) >= 40 || JSON.stringify(line).includes(messageId))
          .slice(-40)
          .map((line) => `  ${JSON.stringify(line)}`),
      ])
      .join('\n');
  }
  const ownerOf = (owners: Map<number, string[]>, accountId: string) =>
    children.find((child) => owners.get(child.pid)?.includes(accountId));

  beforeAll(async () => {
    gw = await startGateway({ overrides: { COMMAND_SHARDS: String(SHARDS), ...LEASES, ...SEND_DEADLINE } });
    // Linked while the in-process connector owns every shard (its log carries the QRs).
    for (const account of accounts) await connectByCommand(gw, account);
    await gw.stopConnector();
  });
  afterAll(async () => {
    for (const child of children) await child.kill();
    await gw?.stop();
  });

  it('three connectors: the accounts spread evenly (not the shards), and a send runs on its owner alone', async () => {
    const live = [spawnChild(), spawnChild(), spawnChild()];
    const owners = await waitForSpread(live, [3, 3, 2]);
    const [from, to] = [accounts[0]!, accounts.at(-1)!];
    const { messageId, outbound } = await sendTextByCommand(gw, from.id, jidOf(to), 'to the owner directly');
    expect(outbound.reason).toBeUndefined();
    expect(outbound.status).toBe('sent');
    await waitFor('the recipient to store it', () => findMessage(gw.table, to.id, messageId));
    // Only the owner's shard queue carried the command: nobody else saw it, nobody handed it back.
    // Its log line comes through a pipe, after the outbound status the send above waited for.
    const owner = ownerOf(owners, from.id)!;
    await owner.waitForLine(
      'the owner to log the command done',
      (line) => line.commandId === outbound.commandId && line.msg === 'command done',
    );
    const sawIt = children.filter((child) => child.lines.some((line) => line.commandId === outbound.commandId));
    expect(sawIt.map((child) => child.pid)).toEqual([owner.pid]);
    expect(owner.lines.filter((line) => line.commandId === outbound.commandId && line.msg === 'command done')).toHaveLength(1);
  });

  it('kill -9 of one: its accounts come back on the others, and a send queued meanwhile runs once', async () => {
    const owners = await ownersByPid();
    const victim = ownerOf(owners, accounts[2]!.id)!;
    const killedAt = Date.now();
    await victim.kill();
    // Queued while nobody runs the account: it waits in the shard's queue for the next owner.
    const to = accounts.find((account) => !owners.get(victim.pid)?.includes(account.id))!;
    const send = sendTextByCommand(gw, accounts[2]!.id, jidOf(to), 'queued during a takeover');
    const survivors = children.filter((child) => child !== victim);
    await waitForSpread(survivors, [4, 4]);
    console.info(`accounts of a killed connector connected again after ${Date.now() - killedAt} ms`);
    const { messageId, outbound } = await send;
    expect(outbound.status).toBe('sent');
    await waitFor('the recipient to store it', () => findMessage(gw.table, to.id, messageId));
    const ran = () =>
      children.flatMap((child) => child.lines.filter((line) => line.commandId === outbound.commandId && line.msg === 'command done'));
    await waitFor('a connector to log the command done', () => ran().length > 0);
    expect(ran()).toHaveLength(1);
  });

  it('a new connector receives its share from the others', async () => {
    const live = children.filter((child) => child.process.exitCode === null && child.process.signalCode === null);
    const started = Date.now();
    const newcomer = spawnChild();
    await waitForSpread([...live, newcomer], [3, 3, 2]);
    console.info(`a new connector had its share after ${Date.now() - started} ms`);
  });

  it('SIGTERM of one: its accounts move with no failed send and no lost inbound message', async () => {
    const live = children.filter((child) => child.process.exitCode === null && child.process.signalCode === null);
    const owners = await ownersByPid();
    const leaving = live[0]!;
    const [mine] = owners.get(leaving.pid)!;
    const moving = accounts.find((account) => account.id === mine)!;
    const other = accounts.find((account) => !owners.get(leaving.pid)?.includes(account.id))!;

    // Both ways throughout the hand-over: from the moving account and to it.
    const sends: ReturnType<typeof sendTextByCommand>[] = [];
    const recipients: string[] = [];
    let sending = true;
    const client = (async () => {
      for (let n = 0; sending; n++) {
        const outgoing = n % 2 === 0;
        sends.push(sendTextByCommand(gw, outgoing ? moving.id : other.id, jidOf(outgoing ? other : moving), `rolling ${n}`));
        recipients.push(outgoing ? other.id : moving.id);
        // The client's pace: a send every 200 ms.
        await simulatedDelay(200);
      }
    })();
    const terminated = Date.now();
    expect(await leaving.terminate()).toBe(0);
    await waitForSpread(
      live.filter((child) => child !== leaving),
      [4, 4],
    );
    // The limit itself is the benchmark's (bench:scale, default lease timings): here it is printed.
    console.info(`SIGTERM hand-over: every account connected again on the others ${Date.now() - terminated} ms after the signal`);
    sending = false;
    await client;
    const settled = await Promise.all(sends);
    expect(settled.filter(({ outbound }) => outbound.status !== 'sent').map(({ outbound }) => outbound.reason)).toEqual([]);
    for (const [index, { messageId }] of settled.entries()) {
      await waitFor(`message ${index} to be stored by its recipient`, () => findMessage(gw.table, recipients[index]!, messageId)).catch(
        (error: unknown) => {
          throw new Error(`${(error as Error).message}\n${messageReport(messageId)}`);
        },
      );
    }
    expect(settled.length).toBeGreaterThan(0);
  });
});
