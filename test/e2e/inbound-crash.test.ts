import { proto, writeRandomPadMax16 } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountPartition, leaseKey, MESSAGE_SK_PREFIX } from '../../core/keys.js';
import { batchWrite } from '../../core/store/batch.js';
import { listInboxRecords } from '../../core/store/inbox.js';
import { findLease } from '../../core/store/leases.js';
import { findMessage } from '../../core/store/messages.js';
import { queryPartitionPrefix } from '../../core/store/paging.js';
import { registerWebhook } from '../../core/store/webhooks.js';
import { Inbox } from '../../connector/inbound/inbox.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { connectByCommand } from './support/commands.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * kill -9 of the connector in the middle of an inbound burst loses nothing WhatsApp was told
 * was delivered: at the instant of the kill every receipted message is stored or written ahead,
 * and the next connector stores it and posts it to the webhooks.
 */
// Generous: two connector processes start under tsx, and a webhook event the killed process had
// received comes back only after its SQS visibility timeout (WEBHOOK_TIMEOUT_MS + 30 s).
describe('inbound messages across a connector crash', { timeout: 240_000 }, () => {
  let gw: Gateway;
  const children: ChildConnector[] = [];
  const alice = { id: 'crashalice', phone: '15550300001' };
  const bob = { phone: '15550300002' };
  const BURST = 80;
  const AFTER_CRASH = 15;
  /** The kill comes once this many messages are stored: the burst is still arriving then. */
  const KILL_AT_STORED = 10;

  const storedCount = async () => (await queryPartitionPrefix(gw.table, accountPartition(alice.id), MESSAGE_SK_PREFIX)).length;
  /** The sandbox's own record: the gateway's device sent the delivery receipt for this message. */
  const receipted = (id: string) => ((gw.sandbox.core.network.originOf(id)?.forwarded ?? 0) & 1) === 1;
  const posted = () => new Set(gw.webhooks.posts.map((w) => String(w.headers['x-webhook-id'])));
  const spawnChild = async () => {
    const child = spawnConnector({ ...gw.env, WEBHOOK_TIMEOUT_MS: '1000' });
    children.push(child);
    await waitFor('the child connector to own alice', async () => (await findLease(gw.table, alice.id))?.owner.includes(`:${child.pid}:`), {
      intervalMs: 100,
    });
    await gw.waitForStatus(alice.id, 'connected');
    return child;
  };
  const sendBurst = async (count: number, label: string) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await gw.control.sendFromPhone(bob.phone, alice.phone, `${label} ${i}`)).id);
    return ids;
  };

  beforeAll(async () => {
    gw = await startGateway();
    await registerWebhook(gw.table, gw.webhooks.url);
    await connectByCommand(gw, alice);
    await gw.control.createPhone(bob.phone, 'Bob');
    await gw.stopConnector();
  });
  afterAll(async () => {
    for (const child of children) await child.kill();
    await gw?.stop();
  });

  it('kill -9 mid-burst: every message sent is stored and posted after the restart', async () => {
    const first = await spawnChild();
    const burst = sendBurst(BURST, 'burst');
    await waitFor(`${KILL_AT_STORED} messages stored`, async () => (await storedCount()) >= KILL_AT_STORED, { intervalMs: 10 });
    await first.kill();
    const sentInBurst = await burst;
    await waitFor('the sandbox to see the device offline', () => gw.sandbox.core.network.onlineCount() === 0, { intervalMs: 50 });

    // The guarantee at the instant of the crash: receipted means stored or written ahead.
    const receiptedAtCrash = sentInBurst.filter(receipted);
    const writtenAhead = new Set((await listInboxRecords(gw.table, alice.id)).map((r) => r.messageId));
    const storedAtCrash = await storedCount();
    const unsafe: string[] = [];
    for (const id of receiptedAtCrash) {
      if (!writtenAhead.has(id) && !(await findMessage(gw.table, alice.id, id))) unsafe.push(id);
    }
    expect(unsafe).toEqual([]);
    expect(receiptedAtCrash.length).toBeGreaterThanOrEqual(KILL_AT_STORED);
    console.info(`at the kill: ${receiptedAtCrash.length}/${BURST} receipted, ${storedAtCrash} stored, ${writtenAhead.size} written ahead`);

    // A record left behind as by a process killed between the receipt and the store.
    const plantedId = `3EB0PLANTED${Date.now()}`;
    await new Inbox(gw.table, alice.id, pino({ level: 'silent' })).record({
      stanza: { id: plantedId, from: `${bob.phone}@s.whatsapp.net`, t: String(Math.floor(Date.now() / 1000)), type: 'text', notify: 'Bob' },
      part: 0,
      encType: 'msg',
      plaintext: writeRandomPadMax16(proto.Message.encode({ conversation: 'written ahead, never stored' }).finish()),
    });
    // Sent while no connector runs: the network queues them for the next login.
    const sentWhileDown = await sendBurst(AFTER_CRASH, 'while down');

    // The dead process's lease: waiting out its expiry is the ownership suite's subject.
    await batchWrite(gw.table, [{ delete: leaseKey(alice.id) }]);
    await spawnChild();

    // The network keeps what the dead device never receipted and delivers it again at the next
    // login, so every message of the burst must arrive, not only the receipted ones.
    const expected = [...sentInBurst, ...sentWhileDown, plantedId];
    await waitFor(
      'every message sent to be stored',
      async () => {
        for (const id of expected) if (!(await findMessage(gw.table, alice.id, id))) return false;
        return true;
      },
      { timeoutMs: 90_000 },
    );
    expect(await findMessage(gw.table, alice.id, plantedId)).toMatchObject({ text: 'written ahead, never stored', fromMe: false });
    await waitFor('every stored message to be posted', () => expected.every((id) => posted().has(`${alice.id}:${id}`)), {
      timeoutMs: 90_000,
    });
    await waitFor('the write-ahead records to be deleted', async () => {
      const left = await listInboxRecords(gw.table, alice.id);
      if (left.length === 0) return true;
      // On a timeout, which records stayed, since when, and what the connectors said of them: a
      // stopped connector whose Baileys was still decrypting used to write records late.
      const now = Date.now();
      const ids = left.map((r) => r.messageId);
      const about = children.flatMap((c) =>
        c.stdout.filter((line) => ids.some((id) => line.includes(id)) || /"level":(4|5)\d|write-ahead records replayed/.test(line)),
      );
      throw new Error(
        `records left: ${left.map((r) => `${r.messageId}#${r.part} (${now - r.receivedAt} ms old)`).join(', ')}; the connectors' lines about them and their warnings:\n${about.join('\n')}`,
      );
    });
    expect(sentWhileDown.every(receipted)).toBe(true);
  });
});
