import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { DeadLetterAlarms } from './alarms.js';
import { GatewayApi } from './api.js';
import { ConnectorService } from './connector-service.js';
import { GatewayData } from './data.js';
import { GatewayNetwork } from './network.js';
import { GatewayQueues } from './queues.js';
import type { GatewayResources } from './runtime-env.js';
import type { GatewaySettings } from './settings.js';

export interface GatewayStackProps extends StackProps {
  readonly settings: GatewaySettings;
  /** The Lambda bundle (see infra/build-lambda.ts) and its handler, `<file>.<export>`. */
  readonly apiCode: lambda.Code;
  readonly apiHandler: string;
  /** Docker build context of the connector image (the repository root, with the Dockerfile). */
  readonly connectorImageDirectory: string;
}

/** The whole gateway: data, queues, alarms, the API function and the connector service. */
export class GatewayStack extends Stack {
  readonly resources: GatewayResources;
  readonly api: GatewayApi;
  readonly connector: ConnectorService;

  constructor(scope: Construct, id: string, props: GatewayStackProps) {
    super(scope, id, props);
    const { settings } = props;

    const data = new GatewayData(this, 'Data', {
      existingTableName: settings.existingTableName,
      existingBucketName: settings.existingBucketName,
      retainData: settings.retainData,
      mediaRetentionDays: settings.mediaRetentionDays,
    });
    const queues = new GatewayQueues(this, 'Queues', {
      commandShards: settings.commandShards,
      existingCommandQueueUrl: settings.existingCommandQueueUrl,
      keepSingleCommandQueue: settings.keepSingleCommandQueue,
      existingWebhookQueueUrl: settings.existingWebhookQueueUrl,
      existingWebhookDeadLetterQueueUrl: settings.existingWebhookDeadLetterQueueUrl,
    });
    this.resources = {
      table: data.table,
      bucket: data.bucket,
      commandQueue: queues.commandQueue,
      commandQueues: queues.commandQueues,
      commandQueueBase: queues.commandQueueBase,
      ...(queues.legacyCommandQueue ? { legacyCommandQueue: queues.legacyCommandQueue } : {}),
      webhookQueue: queues.webhookQueue,
      ...(queues.webhookDeadLetterQueue ? { webhookDeadLetterQueue: queues.webhookDeadLetterQueue } : {}),
    };
    const alarms = new DeadLetterAlarms(this, 'Alarms', {
      deadLetterQueues: queues.deadLetterQueues,
      webhookQueue: queues.webhookQueue,
      alarmEmail: settings.alarmEmail,
    });

    const { vpc } = new GatewayNetwork(this, 'Network', { flowLogs: settings.vpcFlowLogs });
    this.api = new GatewayApi(this, 'Api', {
      code: props.apiCode,
      handler: props.apiHandler,
      resources: this.resources,
      vpc,
      settings,
    });
    this.connector = new ConnectorService(this, 'Connector', {
      imageDirectory: props.connectorImageDirectory,
      resources: this.resources,
      vpc,
      settings,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the REST API' });
    if (this.api.invokePolicy) {
      new CfnOutput(this, 'ApiInvokePolicyArn', {
        value: this.api.invokePolicy.managedPolicyArn,
        description: 'Attach to the IAM users/roles allowed to call the API',
      });
    }
    new CfnOutput(this, 'FunctionName', { value: this.api.function.functionName });
    new CfnOutput(this, 'TableName', { value: this.resources.table.tableName });
    new CfnOutput(this, 'MediaBucketName', { value: this.resources.bucket.bucketName });
    if (data.accessLogBucket) {
      new CfnOutput(this, 'MediaAccessLogBucketName', {
        value: data.accessLogBucket.bucketName,
        description: "The media bucket's server access logs, under media/",
      });
    }
    if (this.api.accessLogGroup) {
      new CfnOutput(this, 'ApiAccessLogGroup', { value: this.api.accessLogGroup.logGroupName, description: 'One line per API request' });
    }
    new CfnOutput(this, 'CommandQueueUrl', { value: this.resources.commandQueue.queueUrl });
    new CfnOutput(this, 'WebhookQueueUrl', { value: this.resources.webhookQueue.queueUrl });
    new CfnOutput(this, 'ClusterName', { value: this.connector.cluster.clusterName });
    new CfnOutput(this, 'ConnectorServiceName', { value: this.connector.service.serviceName });
    new CfnOutput(this, 'ConnectorLogGroup', {
      value: this.connector.logGroup.logGroupName,
      description: 'The QR code of a new account appears here',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topic.topicArn });
  }
}
