import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { targetPatternService } from '../../core/aws-targets.js';
import { acknowledgeWildcardResources } from './acknowledge.js';
import { mediaKeyPatterns, tableSchema } from './data.js';
import type { GatewayResources } from './runtime-env.js';

/**
 * Least privilege, written per process from what it does (not the broad `grantReadWriteData`
 * helpers, which add Scan, transactions and every index). Every statement names its resources.
 */

/** The API: reads, account/outbound/webhook records, account deletion; sends commands and replayed webhook events; media. */
const apiTableActions = [
  'dynamodb:GetItem', // account, message, media, outbound status poll
  'dynamodb:Query', // chats of an account, items of an account on delete, webhook registrations
  'dynamodb:PutItem', // create account, outbound `pending`
  'dynamodb:UpdateItem', // account status on connect / disconnect, webhook registration
  'dynamodb:DeleteItem', // account record, webhook registration
  'dynamodb:BatchWriteItem', // account deletion in batches of 25
] as const;
const apiIndexActions = ['dynamodb:Query'] as const; // all accounts, messages of a chat, a replay's chats and messages

/** The connector: sessions, auth keys in batches, inbound messages, leases, outbound status. */
const connectorTableActions = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
] as const;
const connectorIndexActions = ['dynamodb:Query'] as const; // accounts to resume

const queueConsumerActions = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueUrl',
  'sqs:GetQueueAttributes',
] as const;

/** Every shard's command queue (docs/design.md, Scale-out). */
function commandQueueArns(resources: GatewayResources): string[] {
  return resources.commandQueues.map((queue) => queue.queueArn);
}

function indexArn(resources: GatewayResources): string {
  return `${resources.table.tableArn}/index/${tableSchema.index.name}`;
}

function grant(grantee: iam.IGrantable, actions: readonly string[], resourceArns: string[]): void {
  iam.Grant.addToPrincipal({ grantee, actions: [...actions], resourceArns });
}

/**
 * The object grants name key patterns, not objects: accounts are created at run time, so the
 * account id in `accounts/<id>/…` is a wildcard (core/media-store.ts). Acknowledged for the
 * AWS Solutions checks (IAM5) on the role holding them.
 */
function acknowledgeMediaPatterns(grantee: iam.IGrantable, objectArns: string[]): void {
  const role = grantee.grantPrincipal;
  if (!Construct.isConstruct(role)) return;
  acknowledgeWildcardResources(
    role,
    objectArns,
    'Object key patterns of the media bucket (core/media-store.ts): `accounts/<accountId>/{media,uploads}/<id>`, with ' +
      'accounts created at run time; nothing outside `accounts/` is granted, and listing is limited to that prefix.',
  );
}

function grantListAccounts(grantee: iam.IGrantable, resources: GatewayResources): void {
  iam.Grant.addToPrincipal({
    grantee,
    actions: ['s3:ListBucket'],
    resourceArns: [resources.bucket.bucketArn],
    conditions: { StringLike: { 's3:prefix': [`${mediaKeyPatterns.listPrefix}*`] } },
  });
}

export function grantApiPermissions(grantee: iam.IGrantable, resources: GatewayResources): void {
  grant(grantee, apiTableActions, [resources.table.tableArn]);
  grant(grantee, apiIndexActions, [indexArn(resources)]);
  grant(grantee, ['sqs:SendMessage', 'sqs:GetQueueUrl'], commandQueueArns(resources));
  // A webhook replay enqueues events (SendMessageBatch is authorized as SendMessage); the queue's
  // URL is in the environment, and the API never receives or deletes them.
  grant(grantee, ['sqs:SendMessage'], [resources.webhookQueue.queueArn]);
  const uploads = resources.bucket.arnForObjects(mediaKeyPatterns.uploads);
  const media = resources.bucket.arnForObjects(mediaKeyPatterns.media);
  const everything = resources.bucket.arnForObjects(mediaKeyPatterns.everything);
  // lib-storage uploads: PutObject also covers Create/UploadPart/CompleteMultipartUpload.
  grant(grantee, ['s3:PutObject', 's3:AbortMultipartUpload'], [uploads]);
  grant(grantee, ['s3:GetObject'], [media]);
  // Account deletion lists and removes everything under accounts/<id>/.
  grant(grantee, ['s3:DeleteObject'], [everything]);
  grantListAccounts(grantee, resources);
  acknowledgeMediaPatterns(grantee, [uploads, media, everything]);
}

export function grantConnectorPermissions(grantee: iam.IGrantable, resources: GatewayResources): void {
  grant(grantee, connectorTableActions, [resources.table.tableArn]);
  grant(grantee, connectorIndexActions, [indexArn(resources)]);
  // SendMessage: a command handed back too often is queued again as a copy before it would reach
  // the dead-letter queue (connector/commands/consumer.ts). One statement for the 32 queues keeps
  // the role's inline policy under its size limit (a second one overflows into a managed policy).
  grant(grantee, ['sqs:SendMessage', ...queueConsumerActions], commandQueueArns(resources));
  // The single queue of a stack from before shards: drained into the shard queues, never sent to.
  if (resources.legacyCommandQueue) grant(grantee, queueConsumerActions, [resources.legacyCommandQueue.queueArn]);
  // The connector both produces webhook events and delivers them.
  grant(grantee, ['sqs:SendMessage', ...queueConsumerActions], [resources.webhookQueue.queueArn]);
  // Events given up after the last delivery attempt are moved to the dead-letter queue directly.
  if (resources.webhookDeadLetterQueue) {
    grant(grantee, ['sqs:SendMessage', 'sqs:GetQueueUrl'], [resources.webhookDeadLetterQueue.queueArn]);
  }
  const objects = resources.bucket.arnForObjects(mediaKeyPatterns.everything);
  grant(grantee, ['s3:PutObject', 's3:GetObject', 's3:DeleteObject', 's3:AbortMultipartUpload'], [objects]);
  grantListAccounts(grantee, resources);
  acknowledgeMediaPatterns(grantee, [objects]);
}

/**
 * AWS event targets (EVENT_TARGET_ARNS, from `eventTargetArns`): the connector delivers to exactly
 * these, one action each, on the patterns as given (IAM reads `*` in a resource as EVENT_TARGET_ARNS
 * does). The queue URL comes from the ARN, so no GetQueueUrl. Nothing without targets. A queue or
 * bus of another account also needs its own resource policy allowing the task role, and a queue
 * encrypted with a customer-managed KMS key a key policy allowing kms:GenerateDataKey and kms:Decrypt.
 */
export function grantEventTargets(grantee: iam.IGrantable, patterns: readonly string[]): void {
  const queues = patterns.filter((pattern) => targetPatternService(pattern) === 'sqs');
  const buses = patterns.filter((pattern) => targetPatternService(pattern) === 'events');
  if (queues.length > 0) grant(grantee, ['sqs:SendMessage'], queues);
  if (buses.length > 0) grant(grantee, ['events:PutEvents'], buses);
  const role = grantee.grantPrincipal;
  if (Construct.isConstruct(role)) {
    acknowledgeWildcardResources(
      role,
      patterns,
      'The eventTargetArns patterns exactly as the deployment gives them, `*` read by IAM as by EVENT_TARGET_ARNS; one ' +
        'action each (sqs:SendMessage, events:PutEvents), and entries such as `*` alone are refused at synthesis.',
    );
  }
}
