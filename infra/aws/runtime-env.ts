import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Config } from '../../core/config.js';
import type { GatewaySettings } from './settings.js';

export interface GatewayResources {
  readonly table: dynamodb.ITable;
  readonly bucket: s3.IBucket;
  readonly commandQueue: sqs.IQueue;
  /** Every shard's command queue (core/shards.ts), and the base name and URL they derive from. */
  readonly commandQueues: sqs.IQueue[];
  readonly commandQueueBase: { name: string; url: string };
  /** The single queue of a stack from before shards, which the connector drains (keepSingleCommandQueue). */
  readonly legacyCommandQueue?: sqs.IQueue;
  readonly webhookQueue: sqs.IQueue;
  readonly webhookDeadLetterQueue?: sqs.IQueue;
}

/** Variables of core/config.ts the deployment sets; typed by the config so a rename breaks here. */
type ConfigVariables = Record<keyof Config, string>;
type DeployedVariables = Pick<
  ConfigVariables,
  | 'TABLE_NAME'
  | 'MEDIA_BUCKET'
  | 'COMMAND_QUEUE_NAME'
  | 'COMMAND_QUEUE_URL'
  | 'COMMAND_SHARDS'
  | 'WEBHOOK_QUEUE_NAME'
  | 'WEBHOOK_QUEUE_URL'
  | 'CREATE_RESOURCES'
  | 'LOG_LEVEL'
  | 'WEBHOOK_ALLOW_PRIVATE'
> &
  Partial<Pick<ConfigVariables, 'WEBHOOK_DLQ_NAME' | 'EVENT_TARGET_ARNS' | 'MESSAGE_RETENTION_DAYS' | 'MEDIA_RETENTION_DAYS'>>;

/**
 * The environment both the function and the connector run with. Queue URLs are passed so
 * nothing resolves names at start; resources are never created on AWS (CloudFormation owns them).
 * WEBHOOK_ALLOW_PRIVATE is always written, `false` unless the deployment opts in: inside a VPC
 * a private address is another tenant's service as often as a receiver. EVENT_TARGET_ARNS only
 * when the deployment allows AWS targets: the API checks registrations, the connector deliveries.
 */
export function runtimeEnvironment(
  resources: GatewayResources,
  settings: Pick<GatewaySettings, 'logLevel' | 'webhookAllowPrivate' | 'eventTargetArns' | 'messageRetentionDays' | 'mediaRetentionDays'>,
): DeployedVariables {
  return {
    TABLE_NAME: resources.table.tableName,
    MEDIA_BUCKET: resources.bucket.bucketName,
    COMMAND_QUEUE_NAME: resources.commandQueueBase.name,
    COMMAND_QUEUE_URL: resources.commandQueueBase.url,
    COMMAND_SHARDS: String(resources.commandQueues.length),
    WEBHOOK_QUEUE_NAME: resources.webhookQueue.queueName,
    WEBHOOK_QUEUE_URL: resources.webhookQueue.queueUrl,
    ...(resources.webhookDeadLetterQueue ? { WEBHOOK_DLQ_NAME: resources.webhookDeadLetterQueue.queueName } : {}),
    CREATE_RESOURCES: 'false',
    LOG_LEVEL: settings.logLevel,
    WEBHOOK_ALLOW_PRIVATE: String(settings.webhookAllowPrivate),
    ...(settings.eventTargetArns.length > 0 ? { EVENT_TARGET_ARNS: settings.eventTargetArns.join(',') } : {}),
    ...(settings.messageRetentionDays === undefined ? {} : { MESSAGE_RETENTION_DAYS: String(settings.messageRetentionDays) }),
    ...(settings.mediaRetentionDays === undefined ? {} : { MEDIA_RETENTION_DAYS: String(settings.mediaRetentionDays) }),
  };
}
