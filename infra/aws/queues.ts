import { Arn, Aws, Duration, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { shardQueueName } from '../../core/shards.js';
import {
  COMMAND_VISIBILITY_SECONDS,
  MAX_RECEIVE_COUNT,
  WEBHOOK_MAX_RECEIVE_COUNT,
  WEBHOOK_VISIBILITY_SECONDS,
} from '../../core/resources.js';

/** Same as the local stack (core/resources.ts): queues behave alike everywhere. */
const deadLetterRetention = Duration.days(14);

export interface GatewayQueuesProps {
  /** Command queues to create, one per shard (core/shards.ts); 1 with an existing queue. */
  readonly commandShards: number;
  readonly existingCommandQueueUrl?: string;
  /** Keep the single command queue of a stack from before shards, to be drained (settings.ts). */
  readonly keepSingleCommandQueue?: boolean;
  readonly existingWebhookQueueUrl?: string;
  readonly existingWebhookDeadLetterQueueUrl?: string;
}

/** A dead-letter queue this stack owns, with a readable label for its alarm. */
export interface OwnedDeadLetterQueue {
  readonly label: string;
  readonly queue: sqs.Queue;
}

/**
 * The command FIFO queue (one message group per account keeps each account's commands in order)
 * and the standard webhook-event queue, each with its dead-letter queue; or existing queues.
 */
export class GatewayQueues extends Construct {
  /** Shard 0's queue (the only one with one shard). */
  readonly commandQueue: sqs.IQueue;
  /** One per shard, in shard order. */
  readonly commandQueues: sqs.IQueue[] = [];
  /**
   * COMMAND_QUEUE_NAME and COMMAND_QUEUE_URL for the processes: the queue itself with one shard;
   * with several, the base name and URL the shard queues' names derive from (core/shards.ts).
   */
  readonly commandQueueBase: { name: string; url: string };
  /** The single queue of a stack from before shards, kept until the connector has drained it. */
  readonly legacyCommandQueue?: sqs.IQueue;
  readonly webhookQueue: sqs.IQueue;
  /** The connector moves an event it gave up on here itself (connector/webhooks/dead-letter.ts). */
  readonly webhookDeadLetterQueue?: sqs.IQueue;
  readonly deadLetterQueues: OwnedDeadLetterQueue[] = [];

  constructor(scope: Construct, id: string, props: GatewayQueuesProps) {
    super(scope, id);

    if (props.existingCommandQueueUrl) {
      this.commandQueues.push(importQueue(this, 'CommandQueue', props.existingCommandQueueUrl));
    } else {
      const deadLetterQueue = new sqs.Queue(this, 'CommandDeadLetterQueue', {
        fifo: true,
        retentionPeriod: deadLetterRetention,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      // Several shards: named queues, so that every process derives a shard's queue from one base
      // name; one shard keeps the generated name (and the logical id) of the single queue.
      const baseName = `${Stack.of(this).stackName}-commands.fifo`;
      const commandQueueProps: sqs.QueueProps = {
        fifo: true,
        // Commands carry their commandId as MessageDeduplicationId.
        contentBasedDeduplication: false,
        visibilityTimeout: Duration.seconds(COMMAND_VISIBILITY_SECONDS),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
      };
      const sharded = props.commandShards > 1;
      for (let shard = 0; shard < props.commandShards; shard++) {
        this.commandQueues.push(
          new sqs.Queue(this, sharded ? `CommandQueue${shard}` : 'CommandQueue', {
            ...(sharded ? { queueName: shardQueueName(baseName, shard, props.commandShards) } : {}),
            ...commandQueueProps,
          }),
        );
      }
      // The single queue's id and properties unchanged: CloudFormation keeps the queue and its messages.
      if (sharded && props.keepSingleCommandQueue) this.legacyCommandQueue = new sqs.Queue(this, 'CommandQueue', commandQueueProps);
      this.deadLetterQueues.push({ label: 'command', queue: deadLetterQueue });
      if (props.commandShards > 1) {
        this.commandQueueBase = { name: baseName, url: `https://sqs.${Aws.REGION}.${Aws.URL_SUFFIX}/${Aws.ACCOUNT_ID}/${baseName}` };
      }
    }
    const [first] = this.commandQueues;
    if (!first) throw new Error('commandShards must be at least 1');
    this.commandQueue = first;
    this.commandQueueBase ??= { name: first.queueName, url: first.queueUrl };

    if (props.existingWebhookQueueUrl) {
      this.webhookQueue = importQueue(this, 'WebhookQueue', props.existingWebhookQueueUrl);
      if (props.existingWebhookDeadLetterQueueUrl) {
        this.webhookDeadLetterQueue = importQueue(this, 'WebhookDeadLetterQueue', props.existingWebhookDeadLetterQueueUrl);
      }
    } else {
      const deadLetterQueue = new sqs.Queue(this, 'WebhookDeadLetterQueue', {
        retentionPeriod: deadLetterRetention,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      this.webhookQueue = new sqs.Queue(this, 'WebhookQueue', {
        visibilityTimeout: Duration.seconds(WEBHOOK_VISIBILITY_SECONDS),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // Each receive is one delivery attempt (core/config.ts WEBHOOK_MAX_ATTEMPTS must not exceed it);
        // the backoff between attempts is a visibility change, so this bounds retries, not time.
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT },
      });
      this.webhookDeadLetterQueue = deadLetterQueue;
      this.deadLetterQueues.push({ label: 'webhook', queue: deadLetterQueue });
    }
  }
}

/** `https://sqs.<region>.amazonaws.com/<account>/<name>` -> the queue's ARN, for IAM grants. */
function queueArnFromUrl(scope: Construct, queueUrl: string): string {
  const match = /^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/(\d{12})\/([A-Za-z0-9_.-]+)$/.exec(queueUrl);
  const [, region, account, name] = match ?? [];
  if (!region || !account || !name) throw new Error(`Not an SQS queue URL: ${queueUrl}`);
  return Arn.format({ service: 'sqs', region, account, resource: name }, Stack.of(scope));
}

function importQueue(scope: Construct, id: string, queueUrl: string): sqs.IQueue {
  return sqs.Queue.fromQueueAttributes(scope, id, {
    queueUrl,
    queueArn: queueArnFromUrl(scope, queueUrl),
    fifo: queueUrl.endsWith('.fifo'),
  });
}
