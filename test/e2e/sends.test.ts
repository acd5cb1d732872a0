import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCommandId, newMessageId } from '../../core/ids.js';
import { findMessage } from '../../core/store/messages.js';
import { claimOutbound, findOutbound, markOutboundSent, putPendingOutbound } from '../../core/store/outbound.js';
import { startTestApi } from '../support/test-api.js';
import { spawnConnector, type ChildConnector } from './support/child-connector.js';
import { connectByCommand, sendTextByCommand } from './support/commands.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * One API answer, one WhatsApp message, against the real connector and the sandbox network: a
 * command seen after its deadline is never sent, a redelivered command is never sent twice, and
 * a connector killed in the middle of a burst of API sends leaves every 200 delivered exactly
 * once and nothing delivered that was answered "not sent".
 */
// Generous: the crash case waits for the killed connector's leases to expire and for its
// commands to become visible again in the queue.
describe('sends: at most once, and only within the API call', { timeout: 300_000 }, () => {
  let gw: Gateway;
  let child: ChildConnector | undefined;
  const alice = { id: 'sendalice', phone: '15550500001' };
  const bobPhone = '15550500002';
  const bobJid = `${bobPhone}@s.whatsapp.net`;

  beforeAll(async () => {
    gw = await startGateway({
      ownership: { scanEveryMs: 1_000, renewEveryMs: 2_000, leaseTtlMs: 10_000 },
      overrides: { SEND_TIMEOUT_MS: '8000' },
    });
    await gw.control.createPhone(bobPhone);
    await connectByCommand(gw, alice);
  });
  afterAll(async () => {
    await child?.kill();
    await gw?.stop();
  });

  const inboxIds = async () => (await gw.control.inbox(bobPhone)).map((m) => m.id);

  /** Enqueues a text send whose outbound record is given by `prepare` (as an API or a crash left it). */
  async function enqueueText(text: string, prepare: (ids: { messageId: string; commandId: string }) => Promise<unknown>) {
    const ids = { messageId: newMessageId(), commandId: newCommandId() };
    await prepare(ids);
    await gw.queues.sendCommand({
      type: 'send_text',
      accountId: alice.id,
      commandId: ids.commandId,
      payload: { messageId: ids.messageId, to: bobJid, text },
    });
    return ids;
  }

  /** A normal send behind the others in the account's queue: once it arrived, the earlier ones were handled. */
  async function sendMarker(text: string): Promise<void> {
    const { messageId, outbound } = await sendTextByCommand(gw, alice.id, bobJid, text);
    expect(outbound.status).toBe('sent');
    await waitFor('the marker on the phone', async () => (await inboxIds()).includes(messageId));
  }

  it('a command found after its deadline is marked failed and never reaches the phone', async () => {
    const late = await enqueueText('too late', (ids) => putPendingOutbound(gw.table, alice.id, ids, Date.now() - 1));
    const failed = await waitFor('the late send to be failed', async () => {
      const outbound = await findOutbound(gw.table, alice.id, late.messageId);
      return outbound?.status === 'failed' ? outbound : undefined;
    });
    expect(failed.reason).toMatch(/after its deadline/);
    await sendMarker('after the late one');
    expect(await inboxIds()).not.toContain(late.messageId);
  });

  it('a redelivered command whose send was claimed or sent is not sent again', async () => {
    const deadline = () => Date.now() + 60_000;
    // As a connector that died after its claim, or after the send but before the ack, leaves them.
    const claimed = await enqueueText('claimed before a crash', async (ids) => {
      await putPendingOutbound(gw.table, alice.id, ids, deadline());
      expect(await claimOutbound(gw.table, alice.id, ids.messageId)).toBe(true);
    });
    const sent = await enqueueText('sent before a crash', async (ids) => {
      await putPendingOutbound(gw.table, alice.id, ids, deadline());
      await claimOutbound(gw.table, alice.id, ids.messageId);
      await markOutboundSent(gw.table, alice.id, ids.messageId);
    });
    await sendMarker('after the redeliveries');
    expect(await findOutbound(gw.table, alice.id, claimed.messageId)).toMatchObject({
      status: 'unknown',
      reason: expect.stringMatching(/may have been delivered and is not sent again/),
    });
    expect(await findOutbound(gw.table, alice.id, sent.messageId)).toMatchObject({ status: 'sent' });
    const ids = await inboxIds();
    expect(ids).not.toContain(claimed.messageId);
    expect(ids).not.toContain(sent.messageId);
  });

  it('a send whose connector stopped before recording it is settled as sent by its receipt, before or after the command comes back, with or without its row', async () => {
    const deadline = () => Date.now() + 60_000;
    const session = gw.connector.registry.get(alice.id);
    if (!session) throw new Error('alice has no session');
    const handle = await session.sendHandle(deadline());
    if ('notConnected' in handle) throw new Error(`alice is ${handle.notConnected}`);
    /** As a connector that stopped right after Baileys sent it leaves a send: claimed, out, no outcome, no row. */
    const sendAsInterrupted = async (ids: { messageId: string }, text: string) => {
      handle.noteOwnSend(ids.messageId);
      await handle.sock.sendMessage(bobJid, { text }, { messageId: ids.messageId });
    };
    const claimedIds = async () => {
      const ids = { messageId: newMessageId(), commandId: newCommandId() };
      await putPendingOutbound(gw.table, alice.id, ids, deadline());
      expect(await claimOutbound(gw.table, alice.id, ids.messageId)).toBe(true);
      return ids;
    };
    const requeue = (ids: { messageId: string; commandId: string }, text: string) =>
      gw.queues.sendCommand({
        type: 'send_text',
        accountId: alice.id,
        commandId: ids.commandId,
        payload: { messageId: ids.messageId, to: bobJid, text },
      });
    const statusOf = async (messageId: string) => (await findOutbound(gw.table, alice.id, messageId))?.status;

    // The receipt first: bob's phone has it, and a message bob typed after his receipt was
    // stored by alice (the account's events are handled in order), then the command comes back.
    const receiptFirst = await claimedIds();
    await sendAsInterrupted(receiptFirst, 'interrupted, receipt first');
    await waitFor('bob to get it', async () => (await inboxIds()).includes(receiptFirst.messageId));
    const { id: afterReceipt } = await gw.control.sendFromPhone(bobPhone, alice.phone, 'after my receipt');
    await waitFor('alice to store what bob sent after his receipt', () => findMessage(gw.table, alice.id, afterReceipt));
    await requeue(receiptFirst, 'interrupted, receipt first');
    await waitFor('the first send settled as sent', async () => (await statusOf(receiptFirst.messageId)) === 'sent');

    // The command first: it finds the send `sending` and leaves it `unknown`; the receipt settles it.
    const commandFirst = await claimedIds();
    await requeue(commandFirst, 'interrupted, command first');
    await waitFor('the second send left unknown', async () => (await statusOf(commandFirst.messageId)) === 'unknown');
    await sendAsInterrupted(commandFirst, 'interrupted, command first');
    await waitFor('the second send settled as sent', async () => (await statusOf(commandFirst.messageId)) === 'sent');

    // Stopped after storing the row, before recording the send: the receipt moved the row on.
    const rowStored = await claimedIds();
    await handle.sock.sendMessage(bobJid, { text: 'interrupted, row stored' }, { messageId: rowStored.messageId });
    await waitFor(
      'the row moved on by bob',
      async () => (await findMessage(gw.table, alice.id, rowStored.messageId))?.status === 'delivered',
    );
    await requeue(rowStored, 'interrupted, row stored');
    await waitFor('the third send settled as sent', async () => (await statusOf(rowStored.messageId)) === 'sent');

    // None went out a second time.
    await sendMarker('after the interrupted sends');
    const interrupted = [receiptFirst.messageId, commandFirst.messageId, rowStored.messageId];
    expect((await inboxIds()).filter((id) => interrupted.includes(String(id))).sort()).toEqual([...interrupted].sort());
  });

  it('SIGKILL of the connector amid parallel API sends: every 200 delivered once, no "not sent" delivered', async () => {
    const api = await startTestApi(gw.stack);
    try {
      // The accounts move to a connector in a child process, which is then killed.
      await gw.stopConnector();
      child = spawnConnector(gw.env);
      await child.waitForLine('the child to run alice', (l) => l.accountId === alice.id && l.status === 'connected');
      await gw.waitForStatus(alice.id, 'connected');

      const texts = Array.from({ length: 12 }, (_, i) => `burst ${i}`);
      let answered200 = 0;
      const keyOf = (i: number) => `burst-${i}`;
      const send = (i: number) =>
        api.call('POST', `/accounts/${alice.id}/message/send`, { to: bobJid, message: texts[i] }, { 'Idempotency-Key': keyOf(i) });
      const calls = texts.map(async (_, i) => {
        const answer = await send(i);
        if (answer.status === 200) answered200 += 1;
        return answer;
      });
      await waitFor('the first answers of the burst', () => answered200 >= 2, { intervalMs: 10 });
      await child.kill();
      const answers = await Promise.all(calls);

      // Another connector takes the account over and gets every command the dead one held.
      const { connector: successor } = await gw.startExtraConnector();
      await waitFor('the successor to run alice', () => successor.registry.get(alice.id), { timeoutMs: 60_000 });
      await gw.waitForStatus(alice.id, 'connected');
      // The commands the dead connector held come back after its visibility timeout.
      await waitFor('the command queue to drain', async () => (await queuedCommands()) === 0, {
        timeoutMs: 200_000,
        intervalMs: 1_000,
      });

      const inbox = (await gw.control.inbox(bobPhone)).filter((m) => texts.includes(String(m.text)));
      const summary = { ok: 0, notSent: 0, unknown: 0 };
      const unknowns: { index: number; delivered: string[] }[] = [];
      texts.forEach((text, i) => {
        const { status, body } = answers[i]!;
        const delivered = inbox.filter((m) => m.text === text);
        if (status === 200) {
          summary.ok += 1;
          expect({ text, delivered: delivered.map((m) => m.id) }).toEqual({ text, delivered: [body.messageId] });
          return;
        }
        expect({ text, status, error: body.error }).toEqual({ text, status: 500, error: 'internal_error' });
        if (/may have been delivered/.test(String(body.detail))) {
          // Killed between handing it to WhatsApp and recording the outcome: at most once.
          summary.unknown += 1;
          expect(delivered.length).toBeLessThanOrEqual(1);
          unknowns.push({ index: i, delivered: delivered.map((m) => String(m.id)) });
        } else {
          summary.notSent += 1;
          expect({ text, detail: body.detail, delivered }).toEqual({ text, detail: body.detail, delivered: [] });
        }
      });
      console.info(`burst of ${texts.length}: ${JSON.stringify(summary)}`);
      // Only the send in progress at the kill can end without a known outcome.
      expect(summary.unknown).toBeLessThanOrEqual(1);
      // Asked again with its key, such a send answers what is known: 200 with its id when a
      // receipt of bob's reached the successor (or moved the row the dead one stored), the same
      // 500 when the only receipt went down with the dead connector; never 200 for a send that
      // did not reach bob.
      for (const { index, delivered } of unknowns) {
        const replay = await send(index);
        if (replay.status === 200) expect({ messageId: replay.body.messageId }).toEqual({ messageId: delivered[0] });
        else
          expect({ status: replay.status, detail: replay.body.detail }).toEqual({
            status: 500,
            detail: expect.stringMatching(/may have been delivered/),
          });
      }
      expect((await gw.control.inbox(bobPhone)).filter((m) => texts.includes(String(m.text))).length).toBe(inbox.length);
      expect(summary.ok).toBeGreaterThan(0);
    } finally {
      await api.close();
    }
  });

  async function queuedCommands(): Promise<number> {
    const result = await gw.stack.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: await gw.queues.commandQueueUrl(),
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(result.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(result.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  }
});
