import { Readable } from 'node:stream';
import { proto } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { createClients, destroyClients, type AwsClients } from '../../../core/aws.js';
import { listOutboxItems } from '../../../core/store/event-outbox.js';
import { advanceMessageStatus, findMessage } from '../../../core/store/messages.js';
import { tableOf } from '../../../core/store/table.js';
import type { WebhookEvent } from '../../../core/schemas/webhook-event.js';
import { EventOutbox } from '../../../connector/inbound/event-outbox.js';
import { createInboundPipeline, type InboundContext } from '../../../connector/inbound/pipeline.js';
import { silentLogger } from '../../support/test-stack.js';
import { waitFor } from '../../support/wait.js';
import { PEER, SELF_JID, useInboundStack, waMessage } from './fixtures.js';
import { webhookEvents as drainWebhookEvents } from './webhook-events.js';

const inbound = useInboundStack('outbox');
const ctx: InboundContext = { selfJid: SELF_JID, download: async () => Readable.from([Buffer.from('x')]) };
const webhookEvents = (accountId: string, count: number, deadlineMs?: number) =>
  drainWebhookEvents(inbound.queues, accountId, count, deadlineMs);
const { Status } = proto.WebMessageInfo;

/** A text the account sent, stored `pending` as the send hands it over. */
async function sendOne(accountId: string) {
  const sent = waMessage({ conversation: 'status please' }, { fromMe: true, status: Status.PENDING });
  await inbound.pipeline.handleUpsert(accountId, { messages: [sent], type: 'append' }, ctx);
  return sent.key.id!;
}

/** An outbox that a killed process left: its items are stored, and nothing in this one waits for them. */
const deadProcessOutbox = () => new EventOutbox(inbound.table(), silentLogger);

/** DynamoDB write units of `clients` from now on, as the emulator reports them per request. */
function countWriteUnits(clients: AwsClients): { units: number } {
  const total = { units: 0 };
  for (const client of [clients.dynamo, clients.dynamoRaw]) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const write = /^(Put|Update|Delete|BatchWrite)(Item)?Command$/.test(context.commandName ?? '');
        if (write) (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
        for (const entry of [consumed].flat()) total.units += (entry as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0;
        return result;
      },
      { step: 'initialize', name: 'writeUnits' },
    );
  }
  return total;
}

describe('event outbox', () => {
  it('a receipt holds an outbox item until its status event is queued; the next one overwrites it, a login here does not replay it, leaving deletes it', async () => {
    const accountId = inbound.newAccount();
    const messageId = await sendOne(accountId);
    await inbound.pipeline.handleStatus(accountId, [{ messageId, status: 'delivered', at: 2_000 }]);
    const [event] = await webhookEvents(accountId, 1);
    expect(event?.eventId).toBe(`${accountId}:${messageId}:status:delivered`);
    const [spent] = await listOutboxItems(inbound.table(), accountId);
    expect(spent?.receipts).toEqual([{ messageId, status: 'delivered', at: 2_000 }]);

    await inbound.pipeline.handleStatus(accountId, [{ messageId, status: 'read', at: 3_000 }]);
    const items = await listOutboxItems(inbound.table(), accountId);
    expect(items.map((item) => [item.id, item.receipts])).toEqual([[spent?.id, [{ messageId, status: 'read', at: 3_000 }]]]);
    await inbound.pipeline.replayOutbox(accountId, { atLogin: true });
    expect((await webhookEvents(accountId, 2, 3_000)).map((e) => e.eventId)).toEqual([`${accountId}:${messageId}:status:read`]);

    await inbound.pipeline.accountLeft(accountId);
    expect(await listOutboxItems(inbound.table(), accountId)).toEqual([]);
  });

  it('replay at login: a receipt left behind after its row moved queues the event under the same id; one before the move applies it first', async () => {
    const accountId = inbound.newAccount();
    const moved = await sendOne(accountId);
    const notMoved = await sendOne(accountId);
    const dead = deadProcessOutbox();
    // Killed after the row write, before the enqueue.
    await dead.hold(accountId, { receipts: [{ messageId: moved, status: 'read', at: 3_000 }] });
    expect(await advanceMessageStatus(inbound.table(), accountId, moved, 'read', 3_000)).toBe(PEER);
    // Killed before the row write.
    await dead.hold(accountId, { receipts: [{ messageId: notMoved, status: 'delivered', at: 4_000 }] });

    // A periodic replay of a process that left nothing behind reads nothing.
    await inbound.pipeline.replayOutbox(accountId, { atLogin: false });
    expect(await listOutboxItems(inbound.table(), accountId)).toHaveLength(2);

    await inbound.pipeline.replayOutbox(accountId, { atLogin: true });
    // The sends' own status events (pending is none) are not in the queue: only the replayed two.
    const events = await webhookEvents(accountId, 2);
    expect(events.map((e) => e.eventId).sort()).toEqual(
      [`${accountId}:${moved}:status:read`, `${accountId}:${notMoved}:status:delivered`].sort(),
    );
    expect(events.find((e) => e.body.messageId === moved)?.body).toEqual({
      messageId: moved,
      chatId: PEER,
      status: 'read',
      timestamp: 3_000,
    });
    expect((await findMessage(inbound.table(), accountId, notMoved))?.status).toBe('delivered');
    await waitFor('the replayed items to be deleted', async () => (await listOutboxItems(inbound.table(), accountId)).length === 0);
  });

  it('replay: an event built whole (an update without a write-ahead record) is queued as it was', async () => {
    const accountId = inbound.newAccount();
    const event = {
      eventId: `${accountId}:3EB0REACTION:reaction`,
      accountId,
      event: 'message.reaction' as const,
      body: { messageId: '3EB0TARGET', chatId: PEER, from: PEER, emoji: '👍', timestamp: 5_000 },
      createdAt: 5_000,
    };
    await deadProcessOutbox().hold(accountId, { events: [event] });
    await inbound.pipeline.replayOutbox(accountId, { atLogin: true });
    expect(await webhookEvents(accountId, 1)).toEqual([event]);
  });

  it('write units per status event: the row update alone before, with the outbox item overwritten now', async () => {
    const clients = createClients(inbound.stack.config);
    try {
      const table = tableOf(inbound.stack.config, clients);
      // The hand-offs, to wait for: the handling does not (a slow receiver holds the item, not the
      // account), and an item still waiting for its hand-off is not overwritten by the next one.
      const handOffs: Promise<void>[] = [];
      const events = {
        publish: (event: WebhookEvent) => {
          const handOff = inbound.queues.sendWebhookEvent(event);
          handOffs.push(handOff);
          return handOff;
        },
      };
      const handedOff = async () => {
        await Promise.all(handOffs);
        await new Promise((resolve) => setImmediate(resolve));
      };
      const pipeline = createInboundPipeline({
        config: inbound.stack.config,
        clients,
        logger: silentLogger,
        queues: inbound.queues,
        events,
      });
      const accountId = inbound.newAccount();
      const before = await sendOne(accountId);
      const after = await sendOne(accountId);
      const counted = countWriteUnits(clients);

      await advanceMessageStatus(table, accountId, before, 'delivered', 2_000);
      const rowOnly = counted.units;
      // The first one puts the account's item, the next ones overwrite it: the same units each.
      await pipeline.handleStatus(accountId, [{ messageId: after, status: 'sent', at: 1_000 }]);
      await handedOff();
      const first = counted.units - rowOnly;
      await pipeline.handleStatus(accountId, [{ messageId: after, status: 'delivered', at: 2_000 }]);
      const next = counted.units - rowOnly - first;
      console.info(
        `write units per status event: ${rowOnly} before (the row), ${next} with the outbox item (${first} for the account's first)`,
      );
      expect(rowOnly).toBe(1);
      expect(first).toBe(2);
      expect(next).toBe(2);
      expect(await listOutboxItems(table, accountId)).toHaveLength(1);
      await webhookEvents(accountId, 2);
    } finally {
      destroyClients(clients);
    }
  });

  it('write units per reaction event: a contact reaction held by its write-ahead record adds none; one without a record adds the outbox item put', async () => {
    const clients = createClients(inbound.stack.config);
    try {
      const pipeline = createInboundPipeline({ config: inbound.stack.config, clients, logger: silentLogger, queues: inbound.queues });
      const accountId = inbound.newAccount();
      const target = waMessage({ conversation: 'react to me' });
      await pipeline.handleUpsert(accountId, { messages: [target], type: 'notify' }, ctx);
      const react = (emoji: string) =>
        waMessage({ reactionMessage: { key: { id: target.key.id!, remoteJid: PEER }, text: emoji, senderTimestampMs: 1_767_000_001_000 } });
      const counted = countWriteUnits(clients);

      await pipeline.handleUpsert(accountId, { messages: [react('🎉')], type: 'notify' }, { ...ctx, writeAhead: () => 'live' });
      const withRecord = counted.units;
      await pipeline.handleUpsert(accountId, { messages: [react('👍')], type: 'notify' }, ctx);
      const withoutRecord = counted.units - withRecord;
      console.info(`write units per reaction event: ${withRecord} held by its record, ${withoutRecord} without one`);
      expect(withRecord).toBe(1);
      expect(withoutRecord).toBe(2);
      expect((await webhookEvents(accountId, 3, 4_000)).filter((e) => e.event === 'message.reaction').map((e) => e.body.emoji)).toEqual([
        '🎉',
        '👍',
      ]);
    } finally {
      destroyClients(clients);
    }
  });
});
