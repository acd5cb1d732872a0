import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCommandId } from '../../core/ids.js';
import { authPartition, authSignalKey } from '../../core/keys.js';
import { batchWrite, partitionKeys } from '../../core/store/batch.js';
import { findMessage } from '../../core/store/messages.js';
import { findSentContent } from '../../core/store/outbound.js';
import { waitFor } from '../support/wait.js';
import { connectByCommand, sendTextByCommand } from './support/commands.js';
import { startGateway, type Gateway } from './support/gateway.js';

/**
 * A recipient that cannot decrypt a message asks its sender for it again (a retry receipt), and
 * the sender encrypts it anew. Baileys finds the message in a cache that lives with one socket;
 * after a restart the connector answers from the send's outbound record
 * (connector/session/sent-content.ts).
 */
describe('a message its recipient asks for again (retry receipt)', { timeout: 180_000 }, () => {
  let gw: Gateway;
  const alice = { id: 'retryalice', phone: '15550600001' };
  const bob = { id: 'retrybob', phone: '15550600002' };
  const bobJid = `${bob.phone}@s.whatsapp.net`;

  beforeAll(async () => {
    gw = await startGateway();
    await connectByCommand(gw, alice);
    await connectByCommand(gw, bob);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('a message sent before a restart is encrypted again from its stored content, and arrives', async () => {
    const first = await sendTextByCommand(gw, alice.id, bobJid, 'hello');
    await waitFor('bob to store the first message', () => findMessage(gw.table, bob.id, first.messageId));

    // Bob goes offline: the next message waits at the network for his device.
    await gw.queues.sendCommand({ type: 'disconnect', accountId: bob.id, commandId: newCommandId(), payload: {} });
    await gw.waitForStatus(bob.id, 'not_started');
    const { messageId, outbound } = await sendTextByCommand(gw, alice.id, bobJid, 'asked for again');
    expect(outbound.status).toBe('sent');
    expect(await findSentContent(gw.table, alice.id, messageId)).toBeInstanceOf(Uint8Array);

    // Bob's device loses its Signal sessions (as one restored from an old backup would): it
    // cannot decrypt the waiting message and asks Alice for it again.
    const collection = `auth_${bob.id}`;
    const sessionPrefix = authSignalKey(collection, 'session', '').sk;
    const sessions = (await partitionKeys(gw.table, authPartition(collection))).filter((key) => key.sk.startsWith(sessionPrefix));
    expect(sessions.length).toBeGreaterThan(0);
    await batchWrite(
      gw.table,
      sessions.map((key) => ({ delete: key })),
    );
    // Alice's socket is a new one by then: Baileys' own cache of her recent sends is empty.
    await gw.restartConnector();
    await gw.waitForStatus(alice.id, 'connected');
    await gw.queues.sendCommand({ type: 'connect', accountId: bob.id, commandId: newCommandId(), payload: {} });
    await gw.waitForStatus(bob.id, 'connected');

    const stored = await waitFor('bob to store the message asked for again', () => findMessage(gw.table, bob.id, messageId), {
      timeoutMs: 30_000,
    });
    expect(stored.text).toBe('asked for again');
  });
});
