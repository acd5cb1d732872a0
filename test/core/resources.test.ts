import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { ensureResources, WEBHOOK_MAX_RECEIVE_COUNT } from '../../core/resources.js';
import { silentLogger, startTestStack, type TestStack } from '../support/test-stack.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('ensureResources', () => {
  it('brings a webhook queue created with an older redrive limit up to date instead of failing', async () => {
    const config = loadConfig({ ...stack.env, WEBHOOK_QUEUE_NAME: 'older-webhooks', WEBHOOK_DLQ_NAME: 'older-webhooks-dlq' });
    const dlq = await stack.clients.sqs.send(new CreateQueueCommand({ QueueName: 'older-webhooks-dlq' }));
    const dlqArn = (await stack.clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] })))
      .Attributes?.QueueArn;
    const older = await stack.clients.sqs.send(
      new CreateQueueCommand({
        QueueName: 'older-webhooks',
        Attributes: { VisibilityTimeout: '60', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 5 }) },
      }),
    );

    await ensureResources(config, stack.clients, silentLogger);

    const attributes = await stack.clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: older.QueueUrl, AttributeNames: ['RedrivePolicy'] }),
    );
    expect(JSON.parse(attributes.Attributes?.RedrivePolicy ?? '{}')).toMatchObject({
      deadLetterTargetArn: dlqArn,
      maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT,
    });
  });
});
