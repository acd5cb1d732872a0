import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { waitFor } from '../support/wait.js';
import { enterPairingCode, linkClient, requestCodeClient, type SandboxClient } from './support/sandbox-client.js';

/** A code of the right shape that is not the client's (Baileys' alphabet has no 0, I, O or U). */
const otherCodeThan = (code: string) => (code.startsWith('AAAA') ? 'BBBBBBBB' : 'AAAAAAAA');

async function phoneDevices(sandbox: RunningSandbox, phone: string): Promise<number[]> {
  const res = await fetch(`${sandbox.descriptor.controlUrl}/phones/${phone}`);
  const body = (await res.json()) as { devices: { device: number }[] };
  return body.devices.map((d) => d.device);
}

describe('sandbox: linking by pairing code', () => {
  let sandbox: RunningSandbox;
  let peer: SandboxClient;
  const clients: SandboxClient[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    peer = await linkClient(sandbox, '15550009000', { pushName: 'Peer' });
    clients.push(peer);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await sandbox?.stop();
  });

  it('links by code like a scan, then sends and receives', async () => {
    const { client, code } = await requestCodeClient(sandbox, '15550009001');
    clients.push(client);
    expect(code).toMatch(/^[A-Z0-9]{8}$/);

    const answer = await enterPairingCode(sandbox, '15550009001', code);
    expect(answer).toEqual({ status: 200, body: { ok: true, jid: '15550009001:1@s.whatsapp.net', device: 1 } });
    await client.waitForOpen(1);
    expect(client.jid).toBe('15550009001:1@s.whatsapp.net');
    expect(client.auth.creds.me?.lid).toMatch(/^\d+:1@lid$/);
    expect(client.closeCodes).toContain(515);
    await waitFor('the history bootstrap', () => client.historySyncs > 0, { timeoutMs: 30_000 });

    const sent = await client.sock!.sendMessage(peer.userJid, { text: 'linked by code' });
    const got = await peer.waitForMessage((m) => m.key.id === sent!.key.id, 'the message of the code-linked client');
    expect(got.message?.conversation ?? got.message?.extendedTextMessage?.text).toBe('linked by code');

    const back = await peer.sock!.sendMessage(client.userJid, { text: 'welcome' });
    const received = await client.waitForMessage((m) => m.key.id === back!.key.id, 'the answer');
    expect(received.message?.conversation ?? received.message?.extendedTextMessage?.text).toBe('welcome');
    expect(client.unexpectedErrors).toEqual([]);
  });

  it('a wrong code is refused and the right one still links; typed with a dash and in lower case', async () => {
    const { client, code } = await requestCodeClient(sandbox, '15550009002');
    clients.push(client);

    const wrong = await enterPairingCode(sandbox, '15550009002', otherCodeThan(code));
    expect(wrong).toEqual({ status: 400, body: { ok: false, error: 'wrong code' } });
    expect(client.openCount).toBe(0);

    const typed = `${code.slice(0, 4)}-${code.slice(4)}`.toLowerCase();
    const right = await enterPairingCode(sandbox, '15550009002', typed);
    expect(right).toEqual({ status: 200, body: { ok: true, jid: '15550009002:1@s.whatsapp.net', device: 1 } });
    await client.waitForOpen(1);
    expect(client.jid).toBe('15550009002:1@s.whatsapp.net');
  });

  it('a wrong code alone leaves the client unlinked and still waiting', async () => {
    const { client, code } = await requestCodeClient(sandbox, '15550009003');
    clients.push(client);

    const wrong = await enterPairingCode(sandbox, '15550009003', otherCodeThan(code));
    expect(wrong).toEqual({ status: 400, body: { ok: false, error: 'wrong code' } });
    // Baileys marks itself registered only once the network accepted its key bundle.
    expect(client.auth.creds.registered).toBe(false);
    expect(client.auth.creds.account).toBeUndefined();
    expect(client.openCount).toBe(0);
    expect(client.closeCodes).toEqual([]);
    expect(await phoneDevices(sandbox, '15550009003')).toEqual([]);
  });

  it('asking again on the same connection replaces the code', async () => {
    const { client, code: first } = await requestCodeClient(sandbox, '15550009004');
    clients.push(client);
    const second = await client.sock!.requestPairingCode('15550009004');
    expect(second).not.toBe(first);

    expect(await enterPairingCode(sandbox, '15550009004', first)).toEqual({ status: 400, body: { ok: false, error: 'wrong code' } });
    expect((await enterPairingCode(sandbox, '15550009004', second)).status).toBe(200);
    await client.waitForOpen(1);
  });

  it('a number no device asked: 404, and an unknown number: 404', async () => {
    const none = await enterPairingCode(sandbox, '15550009000', 'AAAAAAAA');
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ ok: false });
    const unknown = await enterPairingCode(sandbox, '15550009999', 'AAAAAAAA');
    expect(unknown).toEqual({ status: 404, body: { ok: false, error: 'unknown phone' } });
  });
});
