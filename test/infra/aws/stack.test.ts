import { Match, type Template } from 'aws-cdk-lib/assertions';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IConstruct } from 'constructs';
import { z } from 'zod';
import { COMMAND_VISIBILITY_SECONDS, WEBHOOK_MAX_RECEIVE_COUNT } from '../../../core/resources.js';
import { loadConfig } from '../../../core/config.js';
import { GatewayData } from '../../../infra/aws/data.js';
import { parseGatewaySettings } from '../../../infra/aws/settings.js';
import { createSynthDirectory, logicalIdOf, synthGateway, type SynthesizedGateway } from './synth-gateway.js';

const scratch = createSynthDirectory();
const directories = { outdir: scratch.outdir, bundle: scratch.placeholderBundle };
let gateway: SynthesizedGateway;
let template: Template;

beforeAll(() => {
  gateway = synthGateway({}, directories);
  template = gateway.template;
});
afterAll(() => scratch.remove());

describe('data', () => {
  it('table: pk/sk, gsi1 (gsi1pk/gsi1sk, ALL), on-demand, point-in-time recovery, TTL on expiresAt', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      // DynamoDB always encrypts at rest; `false` selects the AWS-owned key (no KMS cost or grants).
      SSESpecification: { SSEEnabled: false },
      GlobalSecondaryIndexes: [
        {
          IndexName: 'gsi1',
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it('table and buckets (media, its access logs) are retained when the stack is deleted, unless retainData=false', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    template.resourceCountIs('AWS::S3::Bucket', 2);
    template.allResources('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
    const disposable = synthGateway({ retainData: 'false' }, directories).template;
    disposable.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    disposable.allResources('AWS::S3::Bucket', { DeletionPolicy: 'Delete' });
  });

  it('bucket: public access blocked, encrypted, abandoned multipart uploads aborted', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' })]),
      },
    });
  });

  it('retention: unset, nothing expires; messageRetentionDays and mediaRetentionDays reach both runtimes, and media expire by a lifecycle rule on accounts/', () => {
    const expiring = (rule: { Id?: string }) => rule.Id === 'expire-media';
    const mediaRules = (synthesized: Template) =>
      Object.values(synthesized.findResources('AWS::S3::Bucket'))
        .flatMap((bucket) => (bucket.Properties?.LifecycleConfiguration?.Rules ?? []) as Array<{ Id?: string }>)
        .filter(expiring);
    expect(mediaRules(template)).toEqual([]);
    expect(JSON.stringify(template.toJSON())).not.toContain('RETENTION_DAYS');

    const { template: kept } = synthGateway({ messageRetentionDays: '30', mediaRetentionDays: '7' }, directories);
    expect(mediaRules(kept)).toEqual([{ Id: 'expire-media', Prefix: 'accounts/', ExpirationInDays: 7, Status: 'Enabled' }]);
    kept.hasResourceProperties('AWS::DynamoDB::Table', { TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } });
    kept.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MESSAGE_RETENTION_DAYS: '30', MEDIA_RETENTION_DAYS: '7' }) },
    });
    for (const variable of [
      { Name: 'MESSAGE_RETENTION_DAYS', Value: '30' },
      { Name: 'MEDIA_RETENTION_DAYS', Value: '7' },
    ]) {
      kept.hasResourceProperties('AWS::ECS::TaskDefinition', {
        ContainerDefinitions: [Match.objectLike({ Environment: Match.arrayWith([variable]) })],
      });
    }
    expect(() => parseGatewaySettings({ mediaRetentionDays: '0' })).toThrow(/mediaRetentionDays/);
  });

  it('media bucket: server access logs under media/ of a log bucket of its own, delivered under a bucket policy, kept 90 days', () => {
    const { accessLogBucket } = findData();
    if (!accessLogBucket) throw new Error('no access log bucket');
    const logBucketId = logicalIdOf(accessLogBucket);
    const resources = template.toJSON().Resources;
    expect(resources[logicalIdOf(gateway.stack.resources.bucket)].Properties.LoggingConfiguration).toEqual({
      DestinationBucketName: { Ref: logBucketId },
      LogFilePrefix: 'media/',
    });
    expect(resources[logBucketId]).toMatchObject({
      DeletionPolicy: 'Retain',
      Properties: {
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        LifecycleConfiguration: { Rules: [{ ExpirationInDays: 90, Status: 'Enabled' }] },
      },
    });
    expect(resources[logBucketId].Properties.AccessControl).toBeUndefined();
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logBucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          {
            Effect: 'Allow',
            Action: 's3:PutObject',
            Principal: { Service: 'logging.s3.amazonaws.com' },
            Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [logBucketId, 'Arn'] }, '/media/*']] },
            Condition: {
              ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [logicalIdOf(gateway.stack.resources.bucket), 'Arn'] } },
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            },
          },
        ]),
      },
    });
    template.hasOutput('MediaAccessLogBucketName', { Value: { Ref: logBucketId } });
  });

  it('bucket policy denies every request without TLS', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });
});

describe('queues and alarms', () => {
  it('one FIFO command queue per shard (32), named from one base, sharing a FIFO dead-letter queue; no content-based deduplication', () => {
    const deadLetter = logicalIdOf(findQueue('CommandDeadLetterQueue'));
    const { commandQueues } = gateway.stack.resources;
    expect(commandQueues).toHaveLength(32);
    for (const [shard, queue] of commandQueues.entries()) {
      expect(template.toJSON().Resources[logicalIdOf(queue)].Properties).toEqual({
        QueueName: `WaGatewayTest-commands-${shard}.fifo`,
        FifoQueue: true,
        ContentBasedDeduplication: false,
        VisibilityTimeout: COMMAND_VISIBILITY_SECONDS,
        SqsManagedSseEnabled: true,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLetter, 'Arn'] }, maxReceiveCount: 5 },
      });
    }
    expect(template.toJSON().Resources[deadLetter].Properties).toMatchObject({ FifoQueue: true });
  });

  it('commandShards=1: the single command queue of earlier versions (same logical id, generated name)', () => {
    const single = synthGateway({ commandShards: '1' }, directories);
    expect(single.stack.resources.commandQueues).toHaveLength(1);
    expect(logicalIdOf(single.stack.resources.commandQueue)).toMatch(/^QueuesCommandQueue[0-9A-F]{8}$/);
    single.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          COMMAND_SHARDS: '1',
          COMMAND_QUEUE_URL: { Ref: logicalIdOf(single.stack.resources.commandQueue) },
        }),
      },
    });
  });

  it('keepSingleCommandQueue: the single queue of a stack from before shards stays (same resource), for the connector alone to drain', () => {
    const single = synthGateway({ commandShards: '1' }, directories);
    const singleId = logicalIdOf(single.stack.resources.commandQueue);
    const upgrading = synthGateway({ keepSingleCommandQueue: 'true' }, directories);
    const legacy = upgrading.stack.resources.legacyCommandQueue;
    if (!legacy) throw new Error('no single command queue kept');
    expect(upgrading.stack.resources.commandQueues).toHaveLength(32);
    // Same logical id and properties as the single queue: CloudFormation neither replaces nor deletes it.
    expect(logicalIdOf(legacy)).toBe(singleId);
    expect(upgrading.template.toJSON().Resources[singleId].Properties).toEqual(single.template.toJSON().Resources[singleId].Properties);
    const containers = Object.values(upgrading.template.findResources('AWS::ECS::TaskDefinition')).flatMap(
      (definition) => definition.Properties.ContainerDefinitions as { Environment: { Name: string; Value: unknown }[] }[],
    );
    expect(containers.flatMap((c) => c.Environment).filter((v) => v.Name === 'LEGACY_COMMAND_QUEUE_URL')).toEqual([
      { Name: 'LEGACY_COMMAND_QUEUE_URL', Value: { Ref: singleId } },
    ]);
    const lambdaEnv = JSON.stringify(Object.values(upgrading.template.findResources('AWS::Lambda::Function')));
    expect(lambdaEnv).not.toContain('LEGACY_COMMAND_QUEUE_URL');
    // Not in a stack that never had a single queue, and refused where it means nothing.
    expect(gateway.stack.resources.legacyCommandQueue).toBeUndefined();
    expect(() => parseGatewaySettings({ keepSingleCommandQueue: 'true', commandShards: '1' })).toThrow(/keepSingleCommandQueue/);
  });

  it('webhook queue is a standard queue with a dead-letter queue after 15 receives (at least WEBHOOK_MAX_ATTEMPTS)', () => {
    const deadLetter = logicalIdOf(findQueue('WebhookDeadLetterQueue'));
    const webhookQueue = template.toJSON().Resources[logicalIdOf(findQueue('WebhookQueue'))];
    expect(webhookQueue.Properties.FifoQueue).toBeUndefined();
    expect(webhookQueue.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [deadLetter, 'Arn'] },
      maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT,
    });
    expect(WEBHOOK_MAX_RECEIVE_COUNT).toBeGreaterThanOrEqual(loadConfig({}).WEBHOOK_MAX_ATTEMPTS);
  });

  it('every queue policy refuses requests without TLS', () => {
    template.resourceCountIs('AWS::SQS::QueuePolicy', 32 + 3);
    template.allResourcesProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
  });

  it('webhook backlog older than 15 minutes, and accounts reconnecting for 15 minutes, raise alarms', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Namespace: 'AWS/SQS',
      Threshold: 900,
      ComparisonOperator: 'GreaterThanThreshold',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(findQueue('WebhookQueue')), 'QueueName'] } }],
      AlarmActions: [{ Ref: Match.stringLikeRegexp('AlarmsTopic') }],
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'AccountsReconnecting',
      Namespace: 'WaGateway',
      Dimensions: [{ Name: 'Service', Value: 'connector' }],
      Period: 60,
      EvaluationPeriods: 15,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [{ Ref: Match.stringLikeRegexp('AlarmsTopic') }],
    });
  });

  it('one alarm per dead-letter queue, at one visible message, notifying the alarm topic', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 2 + 2);
    for (const name of ['CommandDeadLetterQueue', 'WebhookDeadLetterQueue']) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Namespace: 'AWS/SQS',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(findQueue(name)), 'QueueName'] } }],
        AlarmActions: [{ Ref: Match.stringLikeRegexp('AlarmsTopic') }],
      });
    }
  });

  it('the alarm topic accepts publishes from CloudWatch of this account only, over TLS', () => {
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sns:Publish',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
          }),
        ]),
      },
    });
  });

  it('alarmEmail subscribes that address to the alarm topic', () => {
    synthGateway({ alarmEmail: 'ops@example.com' }, directories).template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
  });
});

describe('api', () => {
  it('Lambda: Node.js 22 on arm64, the bundle handler, resource names from the stack, no resource creation', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Environment: {
        Variables: {
          TABLE_NAME: { Ref: logicalIdOf(gateway.stack.resources.table) },
          MEDIA_BUCKET: { Ref: logicalIdOf(gateway.stack.resources.bucket) },
          COMMAND_QUEUE_URL: Match.anyValue(),
          COMMAND_QUEUE_NAME: 'WaGatewayTest-commands.fifo',
          COMMAND_SHARDS: '32',
          WEBHOOK_QUEUE_URL: { Ref: logicalIdOf(gateway.stack.resources.webhookQueue) },
          WEBHOOK_QUEUE_NAME: Match.anyValue(),
          CREATE_RESOURCES: 'false',
          LOG_LEVEL: 'info',
          WEBHOOK_ALLOW_PRIVATE: 'false',
        },
      },
    });
  });

  it('default access: HTTP API whose only route requires IAM (SigV4) authorization, with an invoke policy', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    template.resourceCountIs('AWS::ApiGatewayV2::Route', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default', AuthorizationType: 'AWS_IAM' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
    });
    template.hasResourceProperties('AWS::IAM::ManagedPolicy', {
      PolicyDocument: { Statement: [Match.objectLike({ Action: 'execute-api:Invoke', Effect: 'Allow' })] },
    });
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 0);
    template.hasOutput('ApiUrl', {});
    template.hasOutput('ApiInvokePolicyArn', {});
  });

  it('the HTTP API writes one JSON access log line per request (the signing principal, method, path, status) to a log group kept a month', () => {
    const { accessLogGroup } = gateway.stack.api;
    if (!accessLogGroup) throw new Error('no access log group');
    template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    const [stage] = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
    expect(stage?.Properties).toMatchObject({ StageName: '$default', AutoDeploy: true });
    expect(stage?.Properties.AccessLogSettings.DestinationArn).toEqual({ 'Fn::GetAtt': [logicalIdOf(accessLogGroup), 'Arn'] });
    expect(JSON.parse(stage?.Properties.AccessLogSettings.Format)).toMatchObject({
      requestId: '$context.requestId',
      caller: '$context.identity.userArn',
      method: '$context.httpMethod',
      path: '$context.path',
      status: '$context.status',
    });
    expect(template.toJSON().Resources[logicalIdOf(accessLogGroup)].Properties).toEqual({ RetentionInDays: 30 });
    template.hasOutput('ApiAccessLogGroup', {});
  });

  it('apiAccess=private: no public API; an internal load balancer open to the VPC range only', () => {
    const { template: privateTemplate } = synthGateway({ apiAccess: 'private' }, directories);
    privateTemplate.resourceCountIs('AWS::ApiGatewayV2::Api', 0);
    privateTemplate.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Scheme: 'internal',
      Type: 'application',
    });
    privateTemplate.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', { TargetType: 'lambda' });
    privateTemplate.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('private network'),
      SecurityGroupIngress: [
        Match.objectLike({ IpProtocol: 'tcp', FromPort: 80, ToPort: 80, CidrIp: { 'Fn::GetAtt': [Match.anyValue(), 'CidrBlock'] } }),
      ],
    });
    const narrowed = synthGateway({ apiAccess: 'private', privateApiCidr: '10.20.0.0/16' }, directories).template;
    narrowed.hasResourceProperties('AWS::EC2::SecurityGroup', {
      SecurityGroupIngress: [Match.objectLike({ CidrIp: '10.20.0.0/16', FromPort: 80 })],
    });
  });
});

describe('api admin key from Secrets Manager', () => {
  const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:wa-gateway-api-key-AbCdEf';

  it('apiKeySecretArn: the function gets the ARN and the secrets extension layer, and may read that secret only', () => {
    const { template: withSecret } = synthGateway({ apiKeySecretArn: secretArn }, directories);
    withSecret.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Layers: [Match.anyValue()],
      Environment: {
        Variables: Match.objectLike({ API_KEY_SECRET_ARN: secretArn, PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2773' }),
      },
    });
    const statements = Object.values(withSecret.findResources('AWS::IAM::Policy')).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>,
    );
    const secretStatements = statements.filter((statement) => JSON.stringify(statement.Action).includes('secretsmanager'));
    expect(secretStatements).toEqual([
      expect.objectContaining({ Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: secretArn }),
    ]);
  });

  it('without it: no layer, no variable, no Secrets Manager permission', () => {
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(fn?.Properties.Layers).toBeUndefined();
    expect(fn?.Properties.Environment.Variables).not.toHaveProperty('API_KEY_SECRET_ARN');
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).not.toContain('secretsmanager');
  });

  it('a value that is not a secret ARN fails synthesis with a clear message', () => {
    expect(() => parseGatewaySettings({ apiKeySecretArn: 'my-secret' })).toThrow(/apiKeySecretArn: must be the full ARN/);
  });
});

describe('connector service', () => {
  it('Fargate on arm64, one task, no port, read-only root with a /tmp volume, logs with retention', () => {
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      RequiresCompatibilities: ['FARGATE'],
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
      ContainerDefinitions: [
        Match.objectLike({
          Name: 'Connector',
          ReadonlyRootFilesystem: true,
          MountPoints: [{ ContainerPath: '/tmp', SourceVolume: 'tmp', ReadOnly: false }],
          PortMappings: Match.absent(),
          Environment: Match.arrayWith([
            { Name: 'TABLE_NAME', Value: { Ref: logicalIdOf(gateway.stack.resources.table) } },
            { Name: 'MEDIA_BUCKET', Value: { Ref: logicalIdOf(gateway.stack.resources.bucket) } },
            { Name: 'COMMAND_QUEUE_NAME', Value: 'WaGatewayTest-commands.fifo' },
            { Name: 'COMMAND_SHARDS', Value: '32' },
            { Name: 'WEBHOOK_QUEUE_URL', Value: { Ref: logicalIdOf(gateway.stack.resources.webhookQueue) } },
            { Name: 'CREATE_RESOURCES', Value: 'false' },
            { Name: 'WEBHOOK_ALLOW_PRIVATE', Value: 'false' },
            { Name: 'METRICS_EMF', Value: 'true' },
          ]),
        }),
      ],
    });
    template.hasResourceProperties('AWS::ECS::Service', {
      LaunchType: 'FARGATE',
      DesiredCount: 1,
      DeploymentConfiguration: Match.objectLike({
        DeploymentCircuitBreaker: { Enable: true, Rollback: true },
        MinimumHealthyPercent: 100,
      }),
      NetworkConfiguration: { AwsvpcConfiguration: Match.objectLike({ AssignPublicIp: 'ENABLED' }) },
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  it('webhookAllowPrivate=true lets the function and the connector deliver to private addresses', () => {
    const { template: opened } = synthGateway({ webhookAllowPrivate: 'true' }, directories);
    opened.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ WEBHOOK_ALLOW_PRIVATE: 'true' }) },
    });
    opened.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [Match.objectLike({ Environment: Match.arrayWith([{ Name: 'WEBHOOK_ALLOW_PRIVATE', Value: 'true' }]) })],
    });
  });

  it('eventTargetArns sets EVENT_TARGET_ARNS on the function and the connector; unset, neither has it', () => {
    const arns = 'arn:aws:sqs:eu-west-1:123456789012:orders,arn:aws:events:eu-west-1:123456789012:event-bus/gateway';
    const { template: targeted } = synthGateway({ eventTargetArns: ` ${arns.replace(',', ' , ')} ` }, directories);
    targeted.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ EVENT_TARGET_ARNS: arns }) },
    });
    targeted.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [Match.objectLike({ Environment: Match.arrayWith([{ Name: 'EVENT_TARGET_ARNS', Value: arns }]) })],
    });
    expect(JSON.stringify(template.toJSON())).not.toContain('EVENT_TARGET_ARNS');
  });

  it('eventTargetArns: a list in cdk.json works as the comma-separated string; an entry that is no queue or bus pattern fails synthesis', () => {
    const arns = ['arn:aws:sqs:*:123456789012:orders-*', 'arn:aws:events:eu-west-1:123456789012:event-bus/gateway'];
    expect(parseGatewaySettings({ eventTargetArns: arns }).eventTargetArns).toEqual(arns);
    expect(parseGatewaySettings({}).eventTargetArns).toEqual([]);
    for (const bad of [
      '*',
      'arn:aws:sqs:*',
      'orders',
      'arn:aws:sns:eu-west-1:123456789012:topic',
      'arn:aws:events:eu-west-1:123456789012:*',
    ]) {
      expect(() => parseGatewaySettings({ eventTargetArns: `${arns[0]},${bad}` }), bad).toThrow(
        /eventTargetArns: not an SQS queue or EventBridge/,
      );
    }
  });

  it('security group: no inbound rule, all outbound (WhatsApp and AWS)', () => {
    const service = template.findResources('AWS::ECS::Service');
    const [serviceResource] = Object.values(service);
    const groupRef = serviceResource?.Properties.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups[0];
    const groupId = groupRef['Fn::GetAtt'][0] as string;
    const group = template.toJSON().Resources[groupId];
    expect(group.Properties.SecurityGroupIngress).toBeUndefined();
    expect(group.Properties.SecurityGroupEgress).toEqual([expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: '-1' })]);
    expect(Object.keys(template.findResources('AWS::EC2::SecurityGroupIngress'))).toHaveLength(0);
  });

  it('no NAT gateway (public subnets, free gateway endpoints for DynamoDB and S3)', () => {
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    template.resourceCountIs('AWS::EC2::VPCEndpoint', 2);
  });

  it('the image is a staged asset of the root Dockerfile for the chosen platform', () => {
    const manifest = z
      .object({
        dockerImages: z.record(
          z.string(),
          z.object({ source: z.object({ directory: z.string(), dockerFile: z.string(), platform: z.string() }) }),
        ),
      })
      .parse(JSON.parse(readFileSync(path.join(scratch.outdir, 'WaGatewayTest.assets.json'), 'utf8')));
    const images = Object.values(manifest.dockerImages);
    expect(images).toHaveLength(1);
    expect(images[0]?.source).toMatchObject({ dockerFile: 'Dockerfile', platform: 'linux/arm64' });
    const staged = readdirSync(path.join(scratch.outdir, images[0]?.source.directory ?? ''));
    // The .dockerignore allow-list: sources and the lockfile, never node_modules or the output;
    // of infra/, only the console's builder.
    expect(staged.sort()).toEqual([
      '.dockerignore',
      'Dockerfile',
      'client',
      'connector',
      'core',
      'dashboard',
      'functions',
      'infra',
      'package-lock.json',
      'package.json',
      'tsconfig.json',
    ]);
    expect(readdirSync(path.join(scratch.outdir, images[0]?.source.directory ?? '', 'infra'))).toEqual(['build-dashboard.ts']);
  });

  it('the shard queue URLs derive from COMMAND_QUEUE_URL: the base name under this account and region', () => {
    const url = JSON.stringify(
      template.toJSON().Resources[logicalIdOf(gateway.stack.api.function)].Properties.Environment.Variables.COMMAND_QUEUE_URL,
    );
    for (const part of ['https://sqs.', 'AWS::Region', 'AWS::URLSuffix', 'AWS::AccountId', '/WaGatewayTest-commands.fifo']) {
      expect(url).toContain(part);
    }
  });

  it('scales on memory between connectorMinCount and connectorMaxCount (1 and 3 by default); equal counts: no scaling', () => {
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 1,
      MaxCapacity: 3,
      ScalableDimension: 'ecs:service:DesiredCount',
    });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        TargetValue: 70,
        PredefinedMetricSpecification: { PredefinedMetricType: 'ECSServiceAverageMemoryUtilization' },
      }),
    });
    const { template: wider } = synthGateway({ connectorMinCount: '2', connectorMaxCount: '6' }, directories);
    wider.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { MinCapacity: 2, MaxCapacity: 6 });
    const { template: fixed } = synthGateway({ connectorMinCount: '2', connectorMaxCount: '2' }, directories);
    fixed.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
    expect(() => parseGatewaySettings({ connectorMinCount: '4', connectorMaxCount: '2' })).toThrow(/connectorMinCount/);
  });

  it('vpcFlowLogs and containerInsights are off by default; on, a flow log of all traffic into a log group kept a month, and Container Insights', () => {
    template.resourceCountIs('AWS::EC2::FlowLog', 0);
    expect(Object.values(template.findResources('AWS::ECS::Cluster'))[0]?.Properties?.ClusterSettings).toBeUndefined();
    const { template: observed } = synthGateway({ vpcFlowLogs: 'true', containerInsights: 'true' }, directories);
    observed.hasResourceProperties('AWS::EC2::FlowLog', {
      ResourceType: 'VPC',
      TrafficType: 'ALL',
      LogDestinationType: 'cloud-watch-logs',
      MaxAggregationInterval: 600,
    });
    const flowLog = Object.values(observed.findResources('AWS::EC2::FlowLog'))[0];
    const logGroupId = flowLog?.Properties.LogGroupName.Ref as string;
    expect(observed.toJSON().Resources[logGroupId].Properties).toEqual({ RetentionInDays: 30 });
    observed.hasResourceProperties('AWS::ECS::Cluster', { ClusterSettings: [{ Name: 'containerInsights', Value: 'enabled' }] });
    expect(() => parseGatewaySettings({ vpcFlowLogs: 'yes' })).toThrow(/vpcFlowLogs/);
    expect(() => parseGatewaySettings({ containerInsights: 'on' })).toThrow(/containerInsights/);
  });

  it('detailedMetrics sets METRICS_EMF_DETAIL on the connector; off by default', () => {
    const connectorEnvironment = (t: typeof template) =>
      (Object.values(t.findResources('AWS::ECS::TaskDefinition'))[0]?.Properties.ContainerDefinitions[0].Environment ?? []) as {
        Name: string;
      }[];
    expect(connectorEnvironment(template).map((v) => v.Name)).not.toContain('METRICS_EMF_DETAIL');
    const { template: detailed } = synthGateway({ detailedMetrics: 'true' }, directories);
    expect(connectorEnvironment(detailed)).toContainEqual({ Name: 'METRICS_EMF_DETAIL', Value: 'true' });
    expect(() => parseGatewaySettings({ detailedMetrics: 'all' })).toThrow(/detailedMetrics/);
  });

  it('connectorArchitecture=x86_64 and connectorDesiredCount=3 are honoured', () => {
    const { template: x86 } = synthGateway({ connectorArchitecture: 'x86_64', connectorDesiredCount: '3' }, directories);
    x86.hasResourceProperties('AWS::ECS::TaskDefinition', { RuntimePlatform: { CpuArchitecture: 'X86_64' } });
    x86.hasResourceProperties('AWS::ECS::Service', { DesiredCount: 3 });
  });
});

describe('existing infrastructure', () => {
  const existing = {
    existingTableName: 'team-wa-table',
    existingBucketName: 'team-wa-media',
    existingCommandQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/team-commands.fifo',
    existingWebhookQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/team-webhooks',
    existingWebhookDeadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/team-webhooks-dlq',
  };

  it('creates no table, bucket or queue, and points both processes and grants at the given ones', () => {
    const { template: reused } = synthGateway(existing, directories);
    reused.resourceCountIs('AWS::DynamoDB::Table', 0);
    // No access log bucket either: the existing bucket's logging is its owner's.
    reused.resourceCountIs('AWS::S3::Bucket', 0);
    reused.resourceCountIs('AWS::SQS::Queue', 0);
    // No dead-letter alarms (the queues are not ours); the backlog and reconnecting alarms remain.
    reused.resourceCountIs('AWS::CloudWatch::Alarm', 2);
    reused.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          TABLE_NAME: 'team-wa-table',
          MEDIA_BUCKET: 'team-wa-media',
          COMMAND_QUEUE_URL: existing.existingCommandQueueUrl,
          COMMAND_QUEUE_NAME: 'team-commands.fifo',
          COMMAND_SHARDS: '1',
          WEBHOOK_QUEUE_URL: existing.existingWebhookQueueUrl,
        }),
      },
    });
    const policies = JSON.stringify(reused.findResources('AWS::IAM::Policy'));
    expect(policies).toContain(':sqs:eu-west-1:123456789012:team-commands.fifo');
    expect(policies).toContain(':table/team-wa-table/index/gsi1');
    expect(policies).toContain(':s3:::team-wa-media/accounts/*/uploads/*');
    expect(policies).toContain(':sqs:eu-west-1:123456789012:team-webhooks-dlq');
    reused.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [
        Match.objectLike({ Environment: Match.arrayWith([{ Name: 'WEBHOOK_DLQ_NAME', Value: 'team-webhooks-dlq' }]) }),
      ],
    });
  });

  it('rejects a command queue URL that is not FIFO, and malformed context', () => {
    expect(() => parseGatewaySettings({ existingCommandQueueUrl: existing.existingWebhookQueueUrl })).toThrow(/FIFO/);
    expect(() => parseGatewaySettings({ existingCommandQueueUrl: existing.existingCommandQueueUrl, commandShards: '8' })).toThrow(
      /one shard/,
    );
    expect(() => parseGatewaySettings({ apiAccess: 'public' })).toThrow(/apiAccess/);
    expect(() => parseGatewaySettings({ connectorCpu: '300' })).toThrow(/connectorCpu/);
    expect(() => parseGatewaySettings({ existingWebhookQueueUrl: 'team-webhooks' })).toThrow(/SQS queue URL/);
  });
});

function findData(): GatewayData {
  const data = gateway.stack.node.findAll().find((c): c is GatewayData => c instanceof GatewayData);
  if (!data) throw new Error('no data construct in the stack');
  return data;
}

function findQueue(constructId: string): IConstruct {
  const queue = gateway.stack.node.findAll().find((c) => c.node.id === constructId);
  if (!queue) throw new Error(`no construct ${constructId} in the stack`);
  return queue;
}
