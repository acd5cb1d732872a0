import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { waitFor } from '../support/wait.js';
import { linkClient, type SandboxClient } from './support/sandbox-client.js';

interface InboxEntry {
  id: string;
  from: string;
  text: string | null;
  type: string;
  timestamp: number;
}

const text = (m: { message?: { conversation?: string | null; extendedTextMessage?: { text?: string | null } | null } | null }) =>
  m.message?.conversation ?? m.message?.extendedTextMessage?.text;

describe('sandbox: the phone (device 0) and several companions', () => {
  let sandbox: RunningSandbox;
  let alice: SandboxClient;
  let aliceSecond: SandboxClient;
  let bob: SandboxClient;

  const phoneSend = async (phone: string, to: string, body: string) => {
    const res = await fetch(`${sandbox.descriptor.controlUrl}/phones/${phone}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to, text: body }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  const phoneInbox = async (phone: string) => {
    const res = await fetch(`${sandbox.descriptor.controlUrl}/phones/${phone}/messages`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { messages: InboxEntry[] }).messages;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    alice = await linkClient(sandbox, '15550003001', { pushName: 'Alice' });
    aliceSecond = await linkClient(sandbox, '15550003001');
    bob = await linkClient(sandbox, '15550003002', { pushName: 'Bob' });
  });

  afterAll(async () => {
    await Promise.all([alice?.stop(), aliceSecond?.stop(), bob?.stop()]);
    await sandbox?.stop();
  });

  it('links a second companion to the same number as device 2', () => {
    expect(alice.jid).toBe('15550003001:1@s.whatsapp.net');
    expect(aliceSecond.jid).toBe('15550003001:2@s.whatsapp.net');
  });

  it('delivers a message from a phone to a companion of another number', async () => {
    const id = await phoneSend('15550003002', '15550003001@s.whatsapp.net', 'from bob phone');
    for (const client of [alice, aliceSecond]) {
      const got = await client.waitForMessage((m) => m.key.id === id, 'phone message');
      expect(text(got)).toBe('from bob phone');
      expect(got.key.fromMe).toBe(false);
    }
    const ownCopy = await bob.waitForMessage((m) => m.key.id === id, 'own phone copy');
    expect(ownCopy.key.fromMe).toBe(true);
    expect(text(ownCopy)).toBe('from bob phone');
  });

  it('delivers a companion message to the other number phone, decrypted', async () => {
    const sent = await bob.sock!.sendMessage(alice.userJid, { text: 'to alice phone too' });
    const entry = await waitFor(
      'the message in the phone inbox',
      async () => (await phoneInbox('15550003001')).find((m) => m.id === sent!.key.id),
      { timeoutMs: 30_000 },
    );
    expect(entry).toMatchObject({ from: '15550003002@s.whatsapp.net', text: 'to alice phone too', type: 'text' });
  });

  it('gives both companions of a number the message, and the sender other companion its own copy', async () => {
    const sent = await bob.sock!.sendMessage(alice.userJid, { text: 'both of you' });
    for (const client of [alice, aliceSecond]) {
      const got = await client.waitForMessage((m) => m.key.id === sent!.key.id, 'fan-out');
      expect(text(got)).toBe('both of you');
    }
    const fromAlice = await alice.sock!.sendMessage(bob.userJid, { text: 'sent from device 1' });
    const copy = await aliceSecond.waitForMessage((m) => m.key.id === fromAlice!.key.id, 'own-device copy');
    expect(copy.key.fromMe).toBe(true);
    expect(copy.key.remoteJid).toBe(bob.userJid);
    expect(text(copy)).toBe('sent from device 1');
  });

  it('a device linked later is announced to peers and gets their next message', async () => {
    const aliceThird = await linkClient(sandbox, '15550003001');
    try {
      expect(aliceThird.jid).toBe('15550003001:3@s.whatsapp.net');
      const sent = await bob.sock!.sendMessage(alice.userJid, { text: 'hello new device' });
      const got = await aliceThird.waitForMessage((m) => m.key.id === sent!.key.id, 'message on the new device');
      expect(text(got)).toBe('hello new device');
      expect(aliceThird.unexpectedErrors).toEqual([]);
    } finally {
      await aliceThird.stop();
    }
  });

  it('logs no Baileys errors', () => {
    for (const client of [alice, aliceSecond, bob]) expect(client.unexpectedErrors).toEqual([]);
  });
});
