import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { waitFor } from '../support/wait.js';
import { linkClient, type SandboxClient } from './support/sandbox-client.js';

describe('sandbox: handshake, QR, scan, 515, login', () => {
  let sandbox: RunningSandbox;
  const clients: SandboxClient[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await sandbox.stop();
  });

  it('links a client by QR scan and opens the connection', async () => {
    const started = Date.now();
    const client = await linkClient(sandbox, '15550001001');
    clients.push(client);
    console.log(`linked and open in ${Date.now() - started} ms`);
    expect(client.qr).toMatch(/^https:\/\/wa\.me\/settings\/linked_devices#/);
    expect(client.jid).toMatch(/^15550001001:1@s\.whatsapp\.net$/);
    expect(client.auth.creds.me?.lid).toMatch(/^\d+:1@lid$/);
    expect(client.closeCodes).toContain(515);
    // The phone's history bootstrap arrives and Baileys finishes its initial app-state sync
    // (instead of waiting 20 s for it).
    await waitFor('the history bootstrap', () => client.historySyncs > 0, { timeoutMs: 30_000 });
    await waitFor('the initial sync to complete', () => (client.auth.creds.accountSyncCounter ?? 0) > 0, { timeoutMs: 30_000 });
    expect(client.unexpectedErrors).toEqual([]);
  });
});
