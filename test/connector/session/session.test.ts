import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCommandId } from '../../../core/ids.js';
import { findAccount } from '../../../core/store/accounts.js';
import { readCreds, readSignalKeys } from '../../../core/store/auth-state.js';
import { findLease } from '../../../core/store/leases.js';
import { findMessage } from '../../../core/store/messages.js';
import { startGateway, type Gateway } from '../../e2e/support/gateway.js';
import { connectByCommand, sendTextByCommand } from '../../e2e/support/commands.js';
import { waitFor } from '../../support/wait.js';
import { putLegacyAccount } from '../../support/legacy-account.js';

/**
 * The connector driven through its command queue only (no HTTP API): sessions against the
 * sandbox network, auth state in the DynamoDB emulator.
 */
describe('connector sessions driven by commands', { timeout: 180_000 }, () => {
  let gw: Gateway;
  const alice = { id: 'cmdalice', phone: '15550100001' };
  const bob = { id: 'cmdbob', phone: '15550100002' };

  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('connect: QR in the log, scanned by the phone, connected; creds and lease stored', async () => {
    await connectByCommand(gw, alice);
    await connectByCommand(gw, bob);
    const account = await findAccount(gw.table, alice.id, true);
    expect(account).toMatchObject({ status: 'connected', currentStatus: 'connected', hasQR: false });
    expect(await readCreds(gw.table, `auth_${alice.id}`)).toBeDefined();
    expect((await findLease(gw.table, alice.id))?.owner).toBe(gw.connector.ownerId);
  });

  it("history sync: the bootstrap's LID mappings reach the auth state; Baileys does not warn", async () => {
    // Bob's phone knows Alice's LID and shares it in the bootstrap it pushes to Bob's new device.
    const aliceLid = await waitFor("Alice's LID mapping in Bob's auth state", async () => {
      const stored = await readSignalKeys(gw.table, `auth_${bob.id}`, 'lid-mapping', [alice.phone]);
      return stored[alice.phone];
    });
    expect(JSON.parse(aliceLid)).toMatch(/^\d+$/);
    expect(gw.logs.lines.some((l) => String(l.msg ?? '').includes('DISABLING ALL SYNC'))).toBe(false);
  });

  it("an account naming another's collection (made before claims existed) is not connected with that session", async () => {
    const intruder = 'cmdintruder';
    await putLegacyAccount(gw.table, { id: intruder, collectionName: `auth_${alice.id}`, status: 'connecting' });
    const from = gw.logs.lines.length;
    await gw.queues.sendCommand({ type: 'connect', accountId: intruder, commandId: newCommandId(), payload: {} });
    await gw.waitForStatus(intruder, 'not_started');
    expect(gw.logs.linesSince(from, (l) => l.accountId === intruder && l.level === 40).map((l) => l.msg)).toEqual([
      'collectionName held by another account; session not started',
    ]);
    expect(gw.connector.registry.accountIds()).not.toContain(intruder);
    expect(await findAccount(gw.table, alice.id, true)).toMatchObject({ status: 'connected' });
  });

  it('send_text: sent with our message id, stored as fromMe, received by the other account', async () => {
    const { messageId, outbound } = await sendTextByCommand(gw, alice.id, `${bob.phone}@s.whatsapp.net`, 'hello bob');
    expect(outbound).toMatchObject({ status: 'sent' });
    expect(await findMessage(gw.table, alice.id, messageId)).toMatchObject({ fromMe: true, text: 'hello bob' });
    const received = await waitFor('bob to store the message', () => findMessage(gw.table, bob.id, messageId));
    expect(received).toMatchObject({ fromMe: false, text: 'hello bob', from: `${alice.phone}@s.whatsapp.net` });
  });

  it('a redelivered send whose outbound is settled is skipped, not sent twice', async () => {
    const { messageId } = await sendTextByCommand(gw, alice.id, `${bob.phone}@s.whatsapp.net`, 'once');
    const commandId = newCommandId();
    await gw.queues.sendCommand({
      type: 'send_text',
      accountId: alice.id,
      commandId,
      payload: { messageId, to: `${bob.phone}@s.whatsapp.net`, text: 'twice?' },
    });
    const handled = await gw.logs.waitForLine('the duplicate to be handled', (l) => l.commandId === commandId && l.msg === 'command done');
    expect(handled.note).toBe('already sent');
    expect((await findMessage(gw.table, alice.id, messageId))?.text).toBe('once');
    expect((await findMessage(gw.table, bob.id, messageId))?.text).toBe('once');
  });

  it('a message from the phone (device 0) arrives as inbound', async () => {
    const { id } = await gw.control.sendFromPhone(bob.phone, alice.phone, 'from the phone');
    const stored = await waitFor('alice to store it', () => findMessage(gw.table, alice.id, id));
    expect(stored).toMatchObject({ text: 'from the phone', fromMe: false, chatId: `${bob.phone}@s.whatsapp.net` });
  });

  it('the phone logs the device out: logged_out, creds cleared; connect gives a new QR', async () => {
    const devices = await gw.control.devices(alice.phone);
    const linked = devices.find((d) => d.device !== 0);
    expect(linked).toBeDefined();
    await gw.control.kick(alice.phone, linked!.device, 'logout');
    await gw.waitForStatus(alice.id, 'logged_out');
    await waitFor('creds to be cleared', async () => (await readCreds(gw.table, `auth_${alice.id}`)) === undefined);

    const from = gw.logs.lines.length;
    await gw.queues.sendCommand({ type: 'connect', accountId: alice.id, commandId: newCommandId(), payload: {} });
    await gw.linkAccount(alice.id, alice.phone, { logsFrom: from });
  });
});
