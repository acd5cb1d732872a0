import { CreateTableCommand, DescribeTableCommand, UpdateTimeToLiveCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from './aws.js';
import type { Config } from './config.js';
import { GSI1 } from './keys.js';
import { logger as rootLogger, type Logger } from './logger.js';
import { shardQueueName } from './shards.js';

/** Deliveries before a command moves to its dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;
/**
 * Receives before SQS itself moves a webhook event to its dead-letter queue. Each receive is one
 * delivery attempt and the worker moves an event there itself after WEBHOOK_MAX_ATTEMPTS (10 by
 * default, over hours), so this must be at least that; the margin covers the extra receives of
 * parked events released early (a receiver answering again, a connector stopping).
 */
export const WEBHOOK_MAX_RECEIVE_COUNT = 15;
/** Long enough for a media send (download from S3, convert, upload to WhatsApp). */
export const COMMAND_VISIBILITY_SECONDS = 120;
export const WEBHOOK_VISIBILITY_SECONDS = 60;

/**
 * Creates the table, bucket and queues when absent. Safe to run on every start and from several
 * processes at once: every "already exists" answer counts as success.
 */
export async function ensureResources(config: Config, clients: AwsClients, log: Logger = rootLogger): Promise<void> {
  await Promise.all([ensureTable(config, clients, log), ensureBucket(config, clients, log), ensureQueues(config, clients, log)]);
}

async function ensureTable(config: Config, { dynamoRaw }: AwsClients, log: Logger): Promise<void> {
  const TableName = config.TABLE_NAME;
  try {
    await dynamoRaw.send(new DescribeTableCommand({ TableName }));
    return;
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ResourceNotFoundException')) throw error;
  }
  try {
    await dynamoRaw.send(
      new CreateTableCommand({
        TableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: 'gsi1pk', AttributeType: 'S' },
          { AttributeName: 'gsi1sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: GSI1,
            KeySchema: [
              { AttributeName: 'gsi1pk', KeyType: 'HASH' },
              { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
    log.info({ table: TableName }, 'created table');
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ResourceInUseException')) throw error;
  }
  await waitUntilTableExists({ client: dynamoRaw, maxWaitTime: 120, minDelay: 1 }, { TableName });
  try {
    await dynamoRaw.send(
      new UpdateTimeToLiveCommand({
        TableName,
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      }),
    );
  } catch (error) {
    // dynalite does not implement TTL; outbound records then simply stay until the account goes.
    log.debug({ err: error }, 'time to live not enabled');
  }
}

async function ensureBucket(config: Config, { s3 }: AwsClients, log: Logger): Promise<void> {
  const Bucket = config.MEDIA_BUCKET;
  try {
    await s3.send(new HeadBucketCommand({ Bucket }));
    return;
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status !== 404) throw error;
  }
  try {
    await s3.send(new CreateBucketCommand({ Bucket }));
    log.info({ bucket: Bucket }, 'created bucket');
  } catch (error) {
    if (!(error instanceof Error && ['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(error.name))) throw error;
  }
}

async function ensureQueues(config: Config, { sqs }: AwsClients, log: Logger): Promise<void> {
  const create = async (name: string, attributes: Record<string, string>) => {
    // CreateQueue is idempotent for identical attributes.
    try {
      const result = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      if (!result.QueueUrl) throw new Error(`CreateQueue ${name} returned no URL`);
      return result.QueueUrl;
    } catch (error) {
      // Named `QueueNameExists`, or with the JSON protocol `AWS.SimpleQueueService.QueueNameExists`.
      if (!(error instanceof Error && /QueueNameExists|QueueAlreadyExists/.test(error.name))) throw error;
    }
    // A queue created by an earlier version with other settings (a data directory kept across
    // an upgrade): brought up to date, except for what SQS cannot change after creation.
    const existing = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    if (!existing.QueueUrl) throw new Error(`Queue ${name} has no URL`);
    const { FifoQueue: _fifo, ContentBasedDeduplication: _dedup, ...changeable } = attributes;
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: existing.QueueUrl, Attributes: changeable }));
    log.info({ queue: name }, 'updated queue settings');
    return existing.QueueUrl;
  };
  const arnOf = async (queueUrl: string) => {
    const result = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
    const arn = result.Attributes?.QueueArn;
    if (!arn) throw new Error(`Queue ${queueUrl} has no ARN`);
    return arn;
  };
  const redrive = (dlqArn: string, maxReceiveCount: number) => JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount });
  const fifo = { FifoQueue: 'true', ContentBasedDeduplication: 'false' };
  const retention = String(14 * 24 * 60 * 60);

  const commands = (async () => {
    if (config.COMMAND_QUEUE_URL) return;
    const dlqArn = await arnOf(await create(config.COMMAND_DLQ_NAME, { ...fifo, MessageRetentionPeriod: retention }));
    // One queue per shard (core/shards.ts), all sharing the one dead-letter queue.
    const shards = Array.from({ length: config.COMMAND_SHARDS }, (_, shard) => shard);
    await Promise.all(
      shards.map((shard) =>
        create(shardQueueName(config.COMMAND_QUEUE_NAME, shard, config.COMMAND_SHARDS), {
          ...fifo,
          VisibilityTimeout: String(COMMAND_VISIBILITY_SECONDS),
          RedrivePolicy: redrive(dlqArn, MAX_RECEIVE_COUNT),
        }),
      ),
    );
  })();
  const webhooks = (async () => {
    if (config.WEBHOOK_QUEUE_URL) return;
    const dlq = await create(config.WEBHOOK_DLQ_NAME, { MessageRetentionPeriod: retention });
    await create(config.WEBHOOK_QUEUE_NAME, {
      VisibilityTimeout: String(WEBHOOK_VISIBILITY_SECONDS),
      RedrivePolicy: redrive(await arnOf(dlq), WEBHOOK_MAX_RECEIVE_COUNT),
    });
  })();
  await Promise.all([commands, webhooks]);
  log.debug('queues ready');
}
