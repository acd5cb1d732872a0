import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMessageIDV2, proto, type BinaryNode, type WAMessage } from '@whiskeysockets/baileys';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { Persistence } from '../../sandbox/persistence.js';
import { sandboxControl } from '../e2e/support/sandbox-control.js';
import { waitFor } from '../support/wait.js';
import { sandboxDataDir } from './support/data-dir-sandbox.js';
import { linkClient, type SandboxClient } from './support/sandbox-client.js';

const { Status } = proto.WebMessageInfo;
const text = (m: WAMessage) => m.message?.conversation ?? m.message?.extendedTextMessage?.text;
const fromPhone = (phone: string) => (node: BinaryNode) => !!node.attrs.from?.startsWith(`${phone}:`) && node.attrs.category !== 'peer';

describe('sandbox: a message is kept until the device receipts it', () => {
  let sandbox: RunningSandbox;
  let alice: SandboxClient;
  let bob: SandboxClient;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    alice = await linkClient(sandbox, '15550011001');
    bob = await linkClient(sandbox, '15550011002');
  });

  afterAll(async () => {
    await Promise.all([alice?.stop(), bob?.stop()]);
    await sandbox?.stop();
  });

  it('a client killed as messages arrive gets them again at its next login, in order, with offline="1"', async () => {
    bob.crashOnMessage(fromPhone('15550011001'));
    const closes = bob.closeCodes.length;
    const ids: string[] = [];
    for (const body of ['one', 'two', 'three']) ids.push((await alice.sock!.sendMessage(bob.userJid, { text: body }))!.key.id!);
    await waitFor('the killed client to close', () => bob.closeCodes.length > closes, { timeoutMs: 30_000 });
    const firstSocket = bob.socketCount;
    expect(bob.rawMessages.some((m) => m.socket === firstSocket && m.id === ids[0])).toBe(true);
    ids.push((await alice.sock!.sendMessage(bob.userJid, { text: 'four' }))!.key.id!);

    bob.start();
    for (const id of ids) await bob.waitForMessage((m) => m.key.id === id && !!text(m), `message ${id} after the restart`);
    const again = bob.rawMessages.filter((m) => m.socket === bob.socketCount && ids.includes(m.id));
    expect(again.map((m) => m.id)).toEqual(ids);
    expect(again.every((m) => m.offline)).toBe(true);
    expect(ids.map((id) => text(bob.messages.find((m) => m.key.id === id)!))).toEqual(['one', 'two', 'three', 'four']);
    expect(ids.map((id) => bob.upsertTypes.get(id))).toEqual(['append', 'append', 'append', 'append']);
    await alice.waitForStatus(ids[0]!, Status.DELIVERY_ACK);
  });

  it('a client that receipted a message does not get it again', async () => {
    const sent = await alice.sock!.sendMessage(bob.userJid, { text: 'once only' });
    await bob.waitForMessage((m) => m.key.id === sent!.key.id, 'the message');
    await alice.waitForStatus(sent!.key.id!, Status.DELIVERY_ACK);
    await bob.stop();
    const backlogs = bob.offlineCounts.length;
    bob.start();
    await waitFor('the end of the offline backlog', () => bob.offlineCounts.length > backlogs, { timeoutMs: 30_000 });
    expect(bob.offlineCounts[backlogs]).toBe(0);
    expect(bob.rawMessages.filter((m) => m.id === sent!.key.id).map((m) => m.socket)).toEqual([bob.socketCount - 1]);
  });

  it('GET /health counts what the network still owes the linked devices, down to nothing once they took it in', async () => {
    const owed = sandboxControl(sandbox.descriptor.controlUrl).undelivered;
    const settled = async () => Object.values(await owed()).every((count) => count === 0);
    await waitFor('the linked devices to take in everything', settled, { timeoutMs: 30_000 });
    await bob.stop();
    const sent = await alice.sock!.sendMessage(bob.userJid, { text: 'while away' });
    await waitFor('the message queued for the stopped device', async () => (await owed()).queued > 0, { timeoutMs: 30_000 });
    expect(await owed()).toEqual({ awaitingBootstrap: 0, queued: 1, unreceipted: 0 });
    bob.start();
    await bob.waitForMessage((m) => m.key.id === sent!.key.id && !!text(m), 'the message after the restart');
    await waitFor('nothing owed once it is receipted', settled, { timeoutMs: 30_000 });
  });

  it('a kicked connection gives back what it was sent and never receipted', async () => {
    bob.crashOnMessage(fromPhone('15550011001'), { hang: true });
    const sent = await alice.sock!.sendMessage(bob.userJid, { text: 'before the kick' });
    const id = sent!.key.id!;
    await waitFor('the message to reach the hung client', () => bob.rawMessages.some((m) => m.id === id), { timeoutMs: 30_000 });
    const closes = bob.closeCodes.length;
    const res = await fetch(`${sandbox.descriptor.controlUrl}/kick`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phone: '15550011002', kind: 'end' }),
    });
    expect(await res.json()).toMatchObject({ kicked: true });
    await waitFor('the kicked client to close', () => bob.closeCodes.length > closes, { timeoutMs: 30_000 });

    const dead = bob.socketCount;
    bob.start();
    await waitFor('the message after the kick', () => bob.upsertTypes.get(id) === 'append', { timeoutMs: 30_000 });
    expect(bob.rawMessages.filter((m) => m.socket > dead && m.id === id).map((m) => m.offline)).toEqual([true]);
  });

  it('a retry receipt does not count: the message comes again if the client dies before it is re-sent', async () => {
    // Bob loses his sessions with Alice's devices and answers her next message with a retry
    // receipt; he waits long before acking it, and dies once her re-sent copy has arrived.
    const first = await alice.sock!.sendMessage(bob.userJid, { text: 'session set up' });
    await bob.waitForMessage((m) => m.key.id === first!.key.id, 'the first message');
    const aliceLidUser = alice.auth.creds.me!.lid!.split(/[:@]/)[0]!;
    const lost = bob.auth.keyIds('session').filter((id) => id.startsWith(`${aliceLidUser}_`));
    expect(lost.length).toBeGreaterThan(0);
    await bob.stop();
    await bob.auth.keys.set({ session: Object.fromEntries(lost.map((id) => [id, null])) });
    bob.socketConfig = { retryRequestDelayMs: 120_000 };
    const opens = bob.openCount;
    bob.start();
    await bob.waitForOpen(opens + 1);

    const id = generateMessageIDV2();
    const copies = () => bob.rawMessages.filter((m) => m.id === id && m.socket === bob.socketCount).length;
    bob.crashOnMessage((node) => node.attrs.id === id && copies() >= 2);
    const closes = bob.closeCodes.length;
    await alice.sock!.sendMessage(bob.userJid, { text: 'retried' }, { messageId: id });
    await waitFor('the client to die after the re-sent copy arrived', () => bob.closeCodes.length > closes, { timeoutMs: 30_000 });

    bob.socketConfig = {};
    const dead = bob.socketCount;
    bob.start();
    await bob.waitForMessage((m) => m.key.id === id && text(m) === 'retried', 'the message after the restart');
    // Every copy the dead client got comes back, the undecryptable original (whose retry receipt
    // did not count) included, and any copy that reached the network after it died.
    const before = bob.rawMessages.filter((m) => m.socket === dead && m.id === id).length;
    expect(before).toBeGreaterThanOrEqual(2);
    const offlineAgain = bob.rawMessages.filter((m) => m.socket > dead && m.id === id && m.offline);
    expect(offlineAgain.length).toBeGreaterThanOrEqual(before);
  });
});

describe('sandbox: unreceipted messages survive a sandbox restart', () => {
  const { dataDir, clients, start } = sandboxDataDir('sandbox-unreceipted-');

  it('a message sent to a hung client is in the snapshot and comes again after the restart', async () => {
    let sandbox = await start({ port: 0 });
    const alice = await linkClient(sandbox, '15550011101');
    const bob = await linkClient(sandbox, '15550011102');
    clients.push(alice, bob);
    bob.crashOnMessage(fromPhone('15550011101'), { hang: true });
    const sent = await alice.sock!.sendMessage(bob.userJid, { text: 'kept across a restart' });
    const id = sent!.key.id!;
    await waitFor('the message to reach the hung client', () => bob.rawMessages.some((m) => m.id === id), { timeoutMs: 30_000 });

    // The connection is still open: the snapshot keeps the message in the device's queue.
    await waitFor(
      'a snapshot holding the unreceipted message',
      () => {
        const bobDevice = Persistence.load(dataDir)
          ?.accounts.find((a) => a.phone === '15550011102')
          ?.devices.get(1);
        return bobDevice?.queue.some((node) => node.attrs.id === id);
      },
      { timeoutMs: 30_000 },
    );

    await alice.stop();
    await sandbox.stop();
    sandbox = await start({ reusePorts: true });
    const dead = bob.socketCount;
    bob.start(sandbox.descriptor);
    // The hung process had already emitted it (its receipt went nowhere); the restarted one gets it as backlog.
    await waitFor('the message after the restart', () => bob.upsertTypes.get(id) === 'append', { timeoutMs: 30_000 });
    expect(text(bob.messages.findLast((m) => m.key.id === id)!)).toBe('kept across a restart');
    expect(bob.rawMessages.filter((m) => m.socket > dead && m.id === id).map((m) => m.offline)).toEqual([true]);
  });
});
