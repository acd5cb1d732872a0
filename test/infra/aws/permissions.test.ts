import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSynthDirectory, logicalIdOf, synthGateway, type SynthesizedGateway } from './synth-gateway.js';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

const scratch = createSynthDirectory();
let gateway: SynthesizedGateway;
let template: Template;
let ids: { table: string; bucket: string; commandQueues: string[]; webhookQueue: string; webhookDeadLetterQueue: string };
const arnsOf = (...logicalIds: string[]) => logicalIds.map((id) => JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] })).sort();

beforeAll(() => {
  gateway = synthGateway({}, { outdir: scratch.outdir, bundle: scratch.placeholderBundle });
  template = gateway.template;
  const { resources } = gateway.stack;
  ids = {
    table: logicalIdOf(resources.table),
    bucket: logicalIdOf(resources.bucket),
    commandQueues: resources.commandQueues.map(logicalIdOf),
    webhookQueue: logicalIdOf(resources.webhookQueue),
    webhookDeadLetterQueue: logicalIdOf(resources.webhookDeadLetterQueue ?? resources.webhookQueue),
  };
});
afterAll(() => scratch.remove());

/** Statements of the policies attached to a role (inline, and any overflow CDK moves to a managed policy). */
function statementsOf(role: IConstruct | undefined, from: Template = template): Statement[] {
  if (!role) throw new Error('role missing');
  const roleId = logicalIdOf(role);
  const attached = [
    ...Object.values(from.findResources('AWS::IAM::Policy')),
    ...Object.values(from.findResources('AWS::IAM::ManagedPolicy')),
  ];
  const policies = attached.filter((policy) => JSON.stringify(policy.Properties.Roles ?? []).includes(`"${roleId}"`));
  expect(policies.length).toBeGreaterThan(0);
  return policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

const actionsOf = (statement: Statement) => [statement.Action].flat();
const isDataAction = (action: string) => /^(dynamodb|sqs|s3):/.test(action);

/** Action -> the resources (as JSON) it is allowed on. */
function grantsOf(statements: Statement[]): Map<string, string[]> {
  const grants = new Map<string, string[]>();
  for (const statement of statements.filter((s) => s.Effect === 'Allow')) {
    for (const action of actionsOf(statement)) {
      for (const resource of [statement.Resource].flat()) {
        grants.set(action, [...(grants.get(action) ?? []), JSON.stringify(resource)]);
      }
    }
  }
  return grants;
}

describe('every IAM policy in the stack', () => {
  it('no data action (DynamoDB, SQS, S3) on a `*` resource, and no wildcard data actions', () => {
    const documents = [
      ...Object.values(template.findResources('AWS::IAM::Policy')),
      ...Object.values(template.findResources('AWS::IAM::ManagedPolicy')),
    ].map((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
    const dataStatements = documents.flat().filter((s) => actionsOf(s).some(isDataAction));
    expect(dataStatements.length).toBeGreaterThan(5);
    for (const statement of dataStatements) {
      expect([statement.Resource].flat()).not.toContain('*');
      for (const action of actionsOf(statement)) expect(action).not.toMatch(/\*/);
    }
  });
});

describe('API function role', () => {
  let grants: Map<string, string[]>;
  beforeAll(() => {
    grants = grantsOf(statementsOf(gateway.stack.api.function.role));
  });

  it('no managed policies; logs only to its own log group', () => {
    const role = gateway.stack.api.function.role;
    if (!role) throw new Error('function has no role');
    const roleResource = template.toJSON().Resources[logicalIdOf(role)];
    expect(roleResource.Properties.ManagedPolicyArns).toBeUndefined();
    const logActions = [...grants.entries()].filter(([action]) => action.startsWith('logs:'));
    expect(logActions.map(([action]) => action).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    for (const [, resources] of logActions) expect(resources).toEqual([expect.stringContaining('ApiFunctionLogs')]);
  });

  it('DynamoDB: exactly the item actions the endpoints use, on the table; only Query on gsi1; no Scan', () => {
    const tableArn = JSON.stringify({ 'Fn::GetAtt': [ids.table, 'Arn'] });
    for (const action of ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']) {
      expect(grants.get(`dynamodb:${action}`)).toEqual([tableArn]);
    }
    expect(grants.get('dynamodb:Query')).toHaveLength(2);
    expect(grants.get('dynamodb:Query')?.[1]).toContain('/index/gsi1');
    const dynamoActions = [...grants.keys()].filter((a) => a.startsWith('dynamodb:')).sort();
    expect(dynamoActions).toEqual(
      ['BatchWriteItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'].map((a) => `dynamodb:${a}`),
    );
  });

  it('SQS: sends commands and (webhook replay) webhook events; never receives, deletes or touches the dead-letter queue', () => {
    const sqsActions = [...grants.keys()].filter((a) => a.startsWith('sqs:')).sort();
    expect(sqsActions).toEqual(['sqs:GetQueueUrl', 'sqs:SendMessage']);
    // Every shard's command queue (docs/design.md, Scale-out), and the webhook queue (replay).
    expect(ids.commandQueues).toHaveLength(32);
    const webhookQueueArn = JSON.stringify({ 'Fn::GetAtt': [ids.webhookQueue, 'Arn'] });
    expect(grants.get('sqs:SendMessage')?.sort()).toEqual([...arnsOf(...ids.commandQueues), webhookQueueArn].sort());
    expect(grants.get('sqs:GetQueueUrl')?.sort()).toEqual(arnsOf(...ids.commandQueues));
  });

  it('S3: writes under uploads/, reads under media/, deletes and lists only under accounts/', () => {
    expect(grants.get('s3:PutObject')).toHaveLength(1);
    expect(grants.get('s3:PutObject')?.[0]).toContain('/accounts/*/uploads/*');
    expect(grants.get('s3:AbortMultipartUpload')?.[0]).toContain('/accounts/*/uploads/*');
    expect(grants.get('s3:GetObject')).toHaveLength(1);
    expect(grants.get('s3:GetObject')?.[0]).toContain('/accounts/*/media/*');
    expect(grants.get('s3:DeleteObject')?.[0]).toContain('/accounts/*');
    expect(grants.get('s3:ListBucket')).toEqual([JSON.stringify({ 'Fn::GetAtt': [ids.bucket, 'Arn'] })]);
    const listing = statementsOf(gateway.stack.api.function.role).find((s) => actionsOf(s).includes('s3:ListBucket'));
    expect(listing?.Condition).toEqual({ StringLike: { 's3:prefix': ['accounts/*'] } });
    const s3Actions = [...grants.keys()].filter((a) => a.startsWith('s3:')).sort();
    expect(s3Actions).toEqual(['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
  });
});

describe('connector task role', () => {
  let grants: Map<string, string[]>;
  beforeAll(() => {
    grants = grantsOf(statementsOf(gateway.stack.connector.taskDefinition.taskRole));
  });

  it('consumes commands and re-queues them on the command queues only; sends and consumes webhook events', () => {
    const webhookQueueArn = JSON.stringify({ 'Fn::GetAtt': [ids.webhookQueue, 'Arn'] });
    for (const action of ['ReceiveMessage', 'DeleteMessage', 'ChangeMessageVisibility']) {
      expect(grants.get(`sqs:${action}`)?.sort()).toEqual(arnsOf(...ids.commandQueues, ids.webhookQueue));
    }
    const webhookDeadLetterArn = JSON.stringify({ 'Fn::GetAtt': [ids.webhookDeadLetterQueue, 'Arn'] });
    // A command handed back too often is re-queued as a copy (connector/commands/consumer.ts);
    // given-up events are moved to the dead-letter queue by the worker itself. Never the
    // command dead-letter queue.
    expect(grants.get('sqs:SendMessage')?.sort()).toEqual([...arnsOf(...ids.commandQueues), webhookQueueArn, webhookDeadLetterArn].sort());
    expect(grants.get('sqs:GetQueueUrl')).toContain(webhookDeadLetterArn);
    expect(grants.has('sqs:PurgeQueue')).toBe(false);
  });

  it('keepSingleCommandQueue: the single queue from before shards is consumed, never sent to; the API never touches it', () => {
    const upgrading = synthGateway(
      { keepSingleCommandQueue: 'true' },
      { outdir: `${scratch.outdir}-upgrading`, bundle: scratch.placeholderBundle },
    );
    const legacy = upgrading.stack.resources.legacyCommandQueue;
    if (!legacy) throw new Error('no single command queue kept');
    const legacyArn = JSON.stringify({ 'Fn::GetAtt': [logicalIdOf(legacy), 'Arn'] });
    const connector = grantsOf(statementsOf(upgrading.stack.connector.taskDefinition.taskRole, upgrading.template));
    for (const action of ['ReceiveMessage', 'DeleteMessage', 'ChangeMessageVisibility']) {
      expect(connector.get(`sqs:${action}`)).toContain(legacyArn);
    }
    expect(connector.get('sqs:SendMessage')).not.toContain(legacyArn);
    const api = grantsOf(statementsOf(upgrading.stack.api.function.role, upgrading.template));
    expect(JSON.stringify([...api.values()])).not.toContain(logicalIdOf(legacy));
  });

  it('DynamoDB item and batch actions on the table, Query on gsi1; no Scan, no table management', () => {
    const dynamoActions = [...grants.keys()].filter((a) => a.startsWith('dynamodb:')).sort();
    expect(dynamoActions).toEqual(
      ['BatchGetItem', 'BatchWriteItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'].map((a) => `dynamodb:${a}`),
    );
    expect(JSON.stringify(grants.get('dynamodb:BatchGetItem'))).toContain(ids.table);
  });

  it('S3 object actions only under accounts/, listing only that prefix', () => {
    for (const action of ['s3:PutObject', 's3:GetObject', 's3:DeleteObject']) {
      expect(grants.get(action)).toHaveLength(1);
      expect(grants.get(action)?.[0]).toContain('/accounts/*');
      expect(grants.get(action)?.[0]).toContain(ids.bucket);
    }
  });
});

describe('eventTargetArns: AWS event targets', () => {
  const queues = ['arn:aws:sqs:eu-west-1:123456789012:orders', 'arn:aws:sqs:*:123456789012:audit-*.fifo'];
  const buses = ['arn:aws:events:eu-west-1:123456789012:event-bus/gateway-*'];
  let targeted: SynthesizedGateway;
  beforeAll(() => {
    targeted = synthGateway(
      { eventTargetArns: [...queues, ...buses].join(',') },
      { outdir: `${scratch.outdir}-targets`, bundle: scratch.placeholderBundle },
    );
  });

  it('the connector may SendMessage to exactly the queue patterns and PutEvents to exactly the bus patterns, nothing else on them', () => {
    const statements = statementsOf(targeted.stack.connector.taskDefinition.taskRole, targeted.template);
    const connector = grantsOf(statements);
    const sendMessage = connector.get('sqs:SendMessage') ?? [];
    // The stack's own queues as before, plus the target patterns as given (IAM reads `*` as the setting does).
    expect(sendMessage.filter((resource) => resource.startsWith('"arn:')).sort()).toEqual(queues.map((arn) => JSON.stringify(arn)).sort());
    expect(connector.get('events:PutEvents')).toEqual(buses.map((arn) => JSON.stringify(arn)));
    expect([...connector.keys()].filter((action) => action.startsWith('events:'))).toEqual(['events:PutEvents']);
    // No other action reaches a target.
    for (const statement of statements) {
      const resources = [statement.Resource].flat().map((resource) => JSON.stringify(resource));
      if (resources.some((resource) => resource.includes('123456789012'))) {
        expect(actionsOf(statement), JSON.stringify(statement)).toEqual([expect.stringMatching(/^(sqs:SendMessage|events:PutEvents)$/)]);
      }
    }
  });

  it('the API may send to none of them', () => {
    const api = grantsOf(statementsOf(targeted.stack.api.function.role, targeted.template));
    expect(JSON.stringify([...api.values()])).not.toContain('123456789012');
    expect([...api.keys()].some((action) => action.startsWith('events:'))).toBe(false);
  });

  it('without the option: no events action anywhere, and the connector sends only to its own queues (above)', () => {
    const documents = [
      ...Object.values(template.findResources('AWS::IAM::Policy')),
      ...Object.values(template.findResources('AWS::IAM::ManagedPolicy')),
    ].map((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
    expect(
      documents
        .flat()
        .flatMap(actionsOf)
        .filter((action) => action.startsWith('events:')),
    ).toEqual([]);
  });
});
