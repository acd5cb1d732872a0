import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listDeliveries } from '../../../core/store/webhook-deliveries.js';
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
});
