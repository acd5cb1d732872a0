import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryLogWriter, listDeliveries, type DeliveryStatus } from '../../../core/store/webhook-deliveries.js';
import { tableOf, type Table } from '../../../core/store/table.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

let stack: TestStack;
let table: Table;
beforeAll(async () => {
  stack = await startTestStack();
  table = tableOf(stack.config, stack.clients);
});
afterAll(async () => {
  await stack?.stop();
});

describe('the deliveries log', () => {
  it('answers lastAttemptAt in Unix ms, entries stored as ISO text by earlier versions included', async () => {
    const at = Date.UTC(2026, 10, 1, 10, 0, 0);
    const entry = (eventId: string, lastAttemptAt: number | string) => ({
      pk: 'WHLOG#wh_mixed',
      sk: `${String(at).padStart(15, '0')}#${eventId}`,
      eventId,
      event: 'message',
      status: 'delivered',
      attempts: 1,
      lastAttemptAt,
    });
    await table.doc.send(new PutCommand({ TableName: table.name, Item: entry('acct:OLD', new Date(at).toISOString()) }));
    await table.doc.send(new PutCommand({ TableName: table.name, Item: entry('acct:NEW', at + 5) }));
    const log = await listDeliveries(table, 'wh_mixed', { limit: 10 });
    expect(Object.fromEntries(log.map((delivery) => [delivery.eventId, delivery.lastAttemptAt]))).toEqual({
      'acct:OLD': at,
      'acct:NEW': at + 5,
    });
  });

  it('the index holds pending and failed entries only; each status filter still finds its entries, newest first', async () => {
    const writer = createDeliveryLogWriter(table);
    const webhookId = 'wh_sparse';
    const at = Date.UTC(2026, 10, 2, 10, 0, 0);
    const record = (eventId: string, createdAt: number, status: DeliveryStatus) =>
      writer.record({ webhookId, eventId, createdAt }, { eventId, event: 'message', status, attempts: 1, lastAttemptAt: createdAt });
    await record('e:OLD_DELIVERED', at, 'delivered');
    await record('e:RETRIED', at + 1, 'pending');
    await record('e:RETRIED', at + 1, 'delivered');
    // Newer failures than every delivered entry: the delivered filter reads past them, page by page.
    for (let i = 0; i < 5; i++) await record(`e:FAILED${i}`, at + 10 + i, 'failed');
    await record('e:PENDING', at + 20, 'pending');

    const item = async (eventId: string, createdAt: number) =>
      (
        await table.doc.send(
          new GetCommand({
            TableName: table.name,
            Key: { pk: `WHLOG#${webhookId}`, sk: `${String(createdAt).padStart(15, '0')}#${eventId}` },
          }),
        )
      ).Item;
    expect(await item('e:RETRIED', at + 1)).not.toHaveProperty('gsi1pk');
    expect((await item('e:PENDING', at + 20))?.gsi1pk).toBe(`WHLOG#${webhookId}#pending`);

    const ids = async (status: DeliveryStatus | undefined, limit: number) =>
      (await listDeliveries(table, webhookId, { status, limit })).map((delivery) => delivery.eventId);
    expect(await ids('delivered', 2)).toEqual(['e:RETRIED', 'e:OLD_DELIVERED']);
    expect(await ids('delivered', 1)).toEqual(['e:RETRIED']);
    expect(await ids('pending', 10)).toEqual(['e:PENDING']);
    expect(await ids('failed', 2)).toEqual(['e:FAILED4', 'e:FAILED3']);
    expect(await ids(undefined, 3)).toEqual(['e:PENDING', 'e:FAILED4', 'e:FAILED3']);
  });
});
