import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageKey, mediaObjectKey, outboundKey } from '../../../core/keys.js';
import { listKeys, mediaStoreOf } from '../../../core/media-store.js';
import { putMessage } from '../../../core/store/messages.js';
import { tableOf } from '../../../core/store/table.js';
import { startRetentionSweep, type RetentionSweep } from '../../../infra/local/retention-sweep.js';
import { silentLogger, startTestStack, type TestStack } from '../../support/test-stack.js';

const DAY = 86_400_000;
let stack: TestStack;
let sweep: RetentionSweep;

beforeAll(async () => {
  stack = await startTestStack({ overrides: { MESSAGE_RETENTION_DAYS: '30', MEDIA_RETENTION_DAYS: '7' } });
  // An hour between passes: the test runs its passes itself, at the times it chooses.
  sweep = startRetentionSweep({ config: stack.config, clients: stack.clients, logger: silentLogger }, 3_600_000);
});
afterAll(async () => {
  await sweep?.stop();
  await stack?.stop();
});

describe('the local retention sweep (what TTL and the lifecycle rule do on AWS)', () => {
  it('deletes the items whose TTL passed and the objects older than MEDIA_RETENTION_DAYS, and nothing else', async () => {
    const table = tableOf(stack.config, stack.clients);
    const media = mediaStoreOf(stack.config, stack.clients);
    const accountId = `sweep${Date.now().toString(36)}`;
    const now = Date.now();
    const message = (messageId: string, timestamp: number) =>
      putMessage(table, accountId, {
        messageId,
        from: 'a@s.whatsapp.net',
        chatId: 'a@s.whatsapp.net',
        timestamp,
        type: 'text',
        fromMe: false,
      });
    await message('OLD', now - 31 * DAY);
    await message('NEW', now - DAY);
    // An item of another kind with a TTL (a send record): the sweep is TTL's, not the messages'.
    await stack.clients.dynamo.send(
      new PutCommand({
        TableName: stack.config.TABLE_NAME,
        Item: { ...outboundKey(accountId, 'SENT'), expiresAt: Math.floor(now / 1000) - 1 },
      }),
    );
    await stack.clients.dynamo.send(
      new PutCommand({ TableName: stack.config.TABLE_NAME, Item: { pk: `KEEP#${accountId}`, sk: 'NO_TTL' } }),
    );
    for (const key of [mediaObjectKey(accountId, 'm1'), `accounts/${accountId}/uploads/u1`]) {
      await stack.clients.s3.send(new PutObjectCommand({ Bucket: stack.config.MEDIA_BUCKET, Key: key, Body: 'x' }));
    }
    const exists = async (key: { pk: string; sk: string }) =>
      Boolean((await stack.clients.dynamo.send(new GetCommand({ TableName: stack.config.TABLE_NAME, Key: key }))).Item);

    const first = await sweep.sweep(now);
    expect(first.items).toBeGreaterThanOrEqual(2);
    expect(first.objects).toBe(0);
    expect(await exists(messageKey(accountId, 'OLD'))).toBe(false);
    expect(await exists(outboundKey(accountId, 'SENT'))).toBe(false);
    expect(await exists(messageKey(accountId, 'NEW'))).toBe(true);
    expect(await exists({ pk: `KEEP#${accountId}`, sk: 'NO_TTL' })).toBe(true);
    expect(await listKeys(media, `accounts/${accountId}/`)).toHaveLength(2);

    // Eight days on: the objects are past their seven days; the message still has three weeks.
    const later = await sweep.sweep(now + 8 * DAY);
    expect(later.objects).toBeGreaterThanOrEqual(2);
    expect(await listKeys(media, `accounts/${accountId}/`)).toEqual([]);
    expect(await exists(messageKey(accountId, 'NEW'))).toBe(true);
  });
});
