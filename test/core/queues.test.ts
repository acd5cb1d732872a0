import { describe, expect, it } from 'vitest';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { newCommandId } from '../../core/ids.js';
import type { Command } from '../../core/schemas/command.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';
import { useTestStack } from '../support/test-stack.js';

const t = useTestStack();

async function receiveAllCommands(expected: number): Promise<Command[]> {
  const bodies: Command[] = [];
  const deadline = Date.now() + 20_000;
  while (bodies.length < expected && Date.now() < deadline) {
    for (const message of await t.queues.receiveCommands({ waitSeconds: 1 })) {
      bodies.push(message.body);
      await t.queues.ackCommand(message.receiptHandle);
    }
  }
  return bodies;
}

describe('command queue', () => {
  it('delivers commands of one account in order and drops a duplicate command id', async () => {
    const first: Command = { type: 'connect', accountId: 'q1', commandId: newCommandId(), payload: {} };
    const second: Command = {
      type: 'send_text',
      accountId: 'q1',
      commandId: newCommandId(),
      payload: { messageId: '3EB0AA', to: '15550001111@s.whatsapp.net', text: 'hi' },
    };
    await t.queues.sendCommand(first);
    await t.queues.sendCommand(first);
    await t.queues.sendCommand(second);
    const received = await receiveAllCommands(2);
    expect(received).toEqual([first, second]);
    expect(await t.queues.receiveCommands({ waitSeconds: 1 })).toEqual([]);
  });

  it('refuses to send a command that breaks the schema', async () => {
    const bad = { type: 'send_text', accountId: 'q2', commandId: 'c', payload: { to: 'x' } } as unknown as Command;
    await expect(t.queues.sendCommand(bad)).rejects.toThrow();
  });

  it('drops a malformed message instead of handing it to the consumer', async () => {
    await t.stack.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: await t.queues.commandQueueUrl(),
        MessageBody: 'not json',
        MessageGroupId: 'q3',
        MessageDeduplicationId: newCommandId(),
      }),
    );
    const good: Command = { type: 'disconnect', accountId: 'q3', commandId: newCommandId(), payload: {} };
    await t.queues.sendCommand(good);
    expect(await receiveAllCommands(1)).toEqual([good]);
  });

  it('a wake-up is deleted unseen; one that says shards were handed also calls onShardsHanded', async () => {
    let handed = 0;
    const onShardsHanded = () => {
      handed += 1;
    };
    await t.queues.wakeReceivers();
    await t.queues.wakeReceivers({ shardsHanded: true });
    const good: Command = { type: 'disconnect', accountId: 'q5', commandId: newCommandId(), payload: {} };
    await t.queues.sendCommand(good);
    const bodies: Command[] = [];
    const deadline = Date.now() + 20_000;
    while ((bodies.length < 1 || handed < 1) && Date.now() < deadline) {
      for (const message of await t.queues.receiveCommands({ waitSeconds: 1, onShardsHanded })) {
        bodies.push(message.body);
        await t.queues.ackCommand(message.receiptHandle);
      }
    }
    expect(bodies).toEqual([good]);
    expect(handed).toBe(1);
    expect(await t.queues.receiveCommands({ waitSeconds: 1, onShardsHanded })).toEqual([]);
    expect(handed).toBe(1);
  });

  it('checks the recipient on receipt: a bad `to` is dropped, a device suffix is dropped from a good one', async () => {
    for (const to of ['nobody', '15550001111:7@s.whatsapp.net']) {
      await t.stack.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: await t.queues.commandQueueUrl(),
          MessageBody: JSON.stringify({
            type: 'send_text',
            accountId: 'q4',
            commandId: newCommandId(),
            payload: { messageId: 'm1', to, text: 'hi' },
          }),
          MessageGroupId: 'q4',
          MessageDeduplicationId: newCommandId(),
        }),
      );
    }
    const [received] = await receiveAllCommands(1);
    expect(received).toMatchObject({ type: 'send_text', payload: { to: '15550001111@s.whatsapp.net' } });
  });
});

describe('webhook event queue', () => {
  it('round-trips an event and redelivers it after a visibility change', async () => {
    const event: WebhookEvent = {
      eventId: 'acc:3EB0X',
      accountId: 'acc',
      event: 'message',
      body: {
        from: '15550001111@s.whatsapp.net',
        message: 'hi',
        messageId: '3EB0X',
        timestamp: 1,
        chatId: '15550001111@s.whatsapp.net',
        fromMe: false,
        type: 'text',
      },
    };
    await t.queues.sendWebhookEvent(event);
    const [first] = await t.queues.receiveWebhookEvents({ waitSeconds: 5 });
    expect(first?.body).toEqual(event);
    await t.queues.changeWebhookVisibility(first!.receiptHandle, 0);
    const [again] = await t.queues.receiveWebhookEvents({ waitSeconds: 5 });
    expect(again?.body).toEqual(event);
    expect(again?.receiveCount).toBe(2);
    await t.queues.ackWebhookEvent(again!.receiptHandle);
  });
});

describe('webhook event queue, batched', () => {
  const eventFor = (n: number, text = `hi ${n}`): WebhookEvent => ({
    eventId: `acc:3EB0B${n}`,
    accountId: 'acc',
    event: 'message',
    body: {
      from: '15550001111@s.whatsapp.net',
      message: text,
      messageId: `3EB0B${n}`,
      timestamp: n,
      accountId: 'acc',
      chatId: '15550001111@s.whatsapp.net',
      fromMe: false,
      type: 'text',
    },
  });

  it('sends 25 events at once (one too big for a batch), each exactly once, and acks them all', async () => {
    const big = 'x'.repeat(60_000);
    const events = Array.from({ length: 25 }, (_, n) => eventFor(n, n === 7 ? big : `hi ${n}`));
    await Promise.all(events.map((event) => t.queues.sendWebhookEvent(event)));
    const received = new Map<string, string>();
    const deadline = Date.now() + 20_000;
    while (received.size < events.length && Date.now() < deadline) {
      const batch = await t.queues.receiveWebhookEvents({ waitSeconds: 1, visibilityTimeoutSeconds: 60 });
      for (const r of batch) {
        expect(received.has(r.body.eventId)).toBe(false);
        received.set(r.body.eventId, r.receiptHandle);
      }
    }
    expect([...received.keys()].sort()).toEqual(events.map((e) => e.eventId).sort());
    await Promise.all([...received.values()].map((handle) => t.queues.ackWebhookEvent(handle)));
    await t.queues.flush();
    expect(await t.queues.receiveWebhookEvents({ waitSeconds: 1, visibilityTimeoutSeconds: 0 })).toEqual([]);
  });

  it('changes the visibility of many events at once (more than one batch request) and answers the handles SQS refused', async () => {
    const events = Array.from({ length: 12 }, (_, n) => eventFor(100 + n));
    await Promise.all(events.map((event) => t.queues.sendWebhookEvent(event)));
    const handles: string[] = [];
    const deadline = Date.now() + 20_000;
    while (handles.length < events.length && Date.now() < deadline) {
      const batch = await t.queues.receiveWebhookEvents({ waitSeconds: 1, visibilityTimeoutSeconds: 600 });
      handles.push(...batch.map((r) => r.receiptHandle));
    }
    expect(handles).toHaveLength(events.length);
    const refused = await t.queues.changeWebhookVisibilities([...handles, 'not-a-receipt-handle'], 0);
    expect(refused).toEqual(['not-a-receipt-handle']);
    // Visible again at once, although they were received for ten minutes.
    const again = new Set<string>();
    while (again.size < events.length && Date.now() < deadline + 20_000) {
      for (const r of await t.queues.receiveWebhookEvents({ waitSeconds: 1, visibilityTimeoutSeconds: 60 })) {
        again.add(r.body.eventId);
        await t.queues.ackWebhookEvent(r.receiptHandle);
      }
    }
    expect([...again].sort()).toEqual(events.map((e) => e.eventId).sort());
    await t.queues.flush();
  });
});
