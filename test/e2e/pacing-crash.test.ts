import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseKey } from '../../core/keys.js';
import { batchWrite } from '../../core/store/batch.js';
import { findLease } from '../../core/store/leases.js';
import { findOutbound } from '../../core/store/outbound.js';
import { loadSendQueue } from '../../core/store/send-queue.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { linkClient, type SandboxClient } from '../sandbox/support/sandbox-client.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * Queued sends survive their connector (docs/sending.md#paced-sends): they live in DynamoDB, and
 * the connector that takes the account next replays them. After a kill -9 and after a SIGTERM
 * hand-over, every queued send reaches the phone exactly once, in order, its gap kept.
 */
const GAP = { min: 500, max: 600 };
const JITTER_MS = 100;

describe('paced sends across connector restarts', { timeout: 240_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  let carol: SandboxClient;
  const children: ChildConnector[] = [];
  const alice = { id: 'pacecrash', phone: '15550810001' };
  const carolPhone = '15550810009';
  const carolJid = `${carolPhone}@s.whatsapp.net`;

  const spawnChild = async () => {
    const child = spawnConnector({ ...gw.env });
    children.push(child);
    await waitFor(
      'the child connector to own the account',
      async () => (await findLease(gw.table, alice.id))?.owner.includes(`:${child.pid}:`),
      {
        intervalMs: 100,
      },
    );
    return child;
  };

  const queue = async (count: number, label: string) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const answer = await api.call(
        'POST',
        `/accounts/${alice.id}/message/send`,
        { to: carolJid, message: `${label} ${i}` },
        { prefer: 'respond-async' },
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      ids.push(String(answer.body.messageId));
    }
    return ids;
  };

  /** Each id reached the phone exactly once, in the order queued, at least the gap's minimum apart. */
  async function expectDeliveredOnceInOrder(ids: string[]) {
    await waitFor(
      'every queued send on the phone',
      () => {
        const missing = ids.filter((id) => !carol.receivedAt.has(id));
        if (missing.length === 0) return true;
        throw new Error(`not on the phone: ${missing.join(', ')}; the phone's sockets: ${carol.socketCount}`);
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    await waitFor('the queue to be empty', async () => (await loadSendQueue(gw.table, alice.id)).sends.length === 0);
    for (const id of ids)
      expect(
        carol.messages.filter((m) => m.key.id === id),
        id,
      ).toHaveLength(1);
    const order = [...carol.receivedAt.keys()].filter((id) => ids.includes(id));
    expect(order).toEqual(ids);
    const times = ids.map((id) => carol.receivedAt.get(id) as number);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(GAP.min - JITTER_MS);
    for (const id of ids) expect((await findOutbound(gw.table, alice.id, id))?.status, id).toBe('sent');
  }

  beforeAll(async () => {
    gw = await startGateway();
    api = await startTestApi(gw.stack);
    carol = await linkClient(gw.sandbox, carolPhone, { pushName: 'Carol' });
    await gw.control.createPhone(alice.phone);
    const from = gw.logs.lines.length;
    const settings = { sendPolicy: { enabled: true, gapMs: GAP, typing: false, warmup: false } };
    expect((await api.call('POST', '/accounts', { id: alice.id, settings })).status).toBe(201);
    await gw.linkAccount(alice.id, alice.phone, { logsFrom: from });
    await gw.stopConnector();
  }, 120_000);
  afterAll(async () => {
    for (const child of children) await child.kill();
    await carol?.stop();
    await api?.close();
    await gw?.stop();
  });

  it('kill -9 with sends queued: the next connector sends every one exactly once, in order', async () => {
    const first = await spawnChild();
    await gw.waitForStatus(alice.id, 'connected');
    const ids = await queue(8, 'before the crash');
    // In the gap after the second send: it is recorded sent and out of the queue, the third waits.
    // (A kill in the middle of a send leaves it `unknown`, at most once: docs/guarantees.md.)
    await waitFor(
      'two sends done',
      async () =>
        carol.receivedAt.has(ids[1] as string) &&
        (await findOutbound(gw.table, alice.id, ids[1] as string))?.status === 'sent' &&
        (await loadSendQueue(gw.table, alice.id)).sends.length === ids.length - 2,
      { timeoutMs: 60_000, intervalMs: 10 },
    );
    await first.kill();
    const left = (await loadSendQueue(gw.table, alice.id)).sends.length;
    expect(left).toBeGreaterThan(0);
    console.info(`at the kill: ${ids.filter((id) => carol.receivedAt.has(id)).length} of ${ids.length} on the phone, ${left} queued`);
    // The dead process's lease: waiting out its expiry is the ownership suite's subject.
    await batchWrite(gw.table, [{ delete: leaseKey(alice.id) }]);
    await spawnChild();
    await expectDeliveredOnceInOrder(ids);
  });

  it('SIGTERM hand-over with sends queued: the next connector sends the rest exactly once, in order', async () => {
    const current = children.at(-1) as ChildConnector;
    const ids = await queue(6, 'before the hand-over');
    await waitFor('one send on the phone', () => carol.receivedAt.has(ids[0] as string), { timeoutMs: 60_000, intervalMs: 10 });
    expect(await current.terminate()).toBe(0);
    await spawnChild();
    await expectDeliveredOnceInOrder(ids);
  });
});
