import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCommandId } from '../../core/ids.js';
import { createAccount } from '../../core/store/accounts.js';
import { findMessage } from '../../core/store/messages.js';
import { registerWebhook } from '../../core/store/webhooks.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { sendTextByCommand, type SandboxAccount } from './support/commands.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * The connector's stdout is what CloudWatch (or any log collector) stores: it must hold the
 * logger's JSON lines and nothing else, and never key material. libsignal prints whole session
 * records (private, root and chain keys) to the console while sessions are set up and
 * replaced; the connector captures that. Here a real connector process links two accounts,
 * sends, receives, is kicked and reconnects, and its stdout is read line by line.
 */
describe('connector process output', { timeout: 240_000 }, () => {
  let gw: Gateway;
  let child: ChildConnector | undefined;
  const alice: SandboxAccount = { id: 'logalice', phone: '15550300001' };
  const bob: SandboxAccount = { id: 'logbob', phone: '15550300002' };
  const jid = (account: SandboxAccount) => `${account.phone}@s.whatsapp.net`;

  beforeAll(async () => {
    gw = await startGateway();
    // The in-process connector would take the accounts: only the child runs.
    await gw.stopConnector();
    child = spawnConnector(gw.env);
  });
  afterAll(async () => {
    await child?.kill();
    await gw?.stop();
  });

  async function link(account: SandboxAccount): Promise<void> {
    const connector = child!;
    await gw.control.createPhone(account.phone);
    await createAccount(gw.table, { id: account.id, collectionName: `auth_${account.id}`, status: 'connecting' });
    const from = connector.lines.length;
    await gw.queues.sendCommand({ type: 'connect', accountId: account.id, commandId: newCommandId(), payload: {} });
    const qrLine = await connector.waitForLine(`a QR for ${account.id}`, (l) => l.event === 'qr' && l.accountId === account.id);
    expect(connector.lines.indexOf(qrLine)).toBeGreaterThanOrEqual(from);
    await gw.control.scan(account.phone, String(qrLine.qr));
    await gw.waitForStatus(account.id, 'connected');
  }

  async function sendAndReceive(sender: SandboxAccount, receiver: SandboxAccount, text: string): Promise<void> {
    const { messageId, outbound } = await sendTextByCommand(gw, sender.id, jid(receiver), text);
    expect(outbound.status).toBe('sent');
    expect(await waitFor(`${receiver.id} to store it`, () => findMessage(gw.table, receiver.id, messageId))).toMatchObject({ text });
  }

  it('link, send, receive, kick and reconnect: stdout holds only JSON log lines, without key material', async () => {
    const connector = child!;
    await registerWebhook(gw.table, gw.webhooks.url);
    await link(alice);
    await link(bob);

    await sendAndReceive(alice, bob, 'hello bob');
    await sendAndReceive(bob, alice, 'hello alice');
    const fromPhone = await gw.control.sendFromPhone(bob.phone, jid(alice), 'from the phone');
    await waitFor('the webhook POST of the phone message', () =>
      gw.webhooks.posts.find((w) => (w.body as { messageId?: string }).messageId === fromPhone.id),
    );

    const [device] = (await gw.control.devices(alice.phone)).filter((d) => d.device !== 0);
    const beforeKick = connector.lines.length;
    await gw.control.kick(alice.phone, device!.device, 'end');
    await connector.waitForLine('the reconnect', (l) => l.accountId === alice.id && l.msg === 'reconnect scheduled');
    expect(connector.lines.indexOf(connector.lines.find((l) => l.msg === 'reconnect scheduled')!)).toBeGreaterThanOrEqual(beforeKick);
    await gw.waitForStatus(alice.id, 'connected');
    await sendAndReceive(alice, bob, 'after the kick');

    expect(await connector.terminate()).toBe(0);
    const output = connector.stdout.join('\n');
    expect(output).not.toMatch(/privKey|rootKey|chainKey|Closing session|SessionEntry|<Buffer/);
    const notLogLines = connector.stdout.filter((line) => {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        return !(typeof parsed.level === 'number' && typeof parsed.time === 'string' && parsed.service === 'wa-gateway');
      } catch {
        return true;
      }
    });
    expect(notLogLines).toEqual([]);
    expect(connector.stdout.length).toBeGreaterThan(10);
  });
});
