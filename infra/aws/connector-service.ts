import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { acknowledge } from './acknowledge.js';
import { grantConnectorPermissions, grantEventTargets } from './permissions.js';
import { runtimeEnvironment, type GatewayResources } from './runtime-env.js';
import type { GatewaySettings } from './settings.js';

export interface ConnectorServiceProps {
  /** Build context holding the root Dockerfile (the repository root). */
  readonly imageDirectory: string;
  readonly resources: GatewayResources;
  readonly vpc: ec2.IVpc;
  readonly settings: Pick<
    GatewaySettings,
    | 'connectorArchitecture'
    | 'connectorDesiredCount'
    | 'connectorMinCount'
    | 'connectorMaxCount'
    | 'connectorCpu'
    | 'connectorMemoryMiB'
    | 'logLevel'
    | 'webhookAllowPrivate'
    | 'eventTargetArns'
    | 'messageRetentionDays'
    | 'mediaRetentionDays'
    | 'containerInsights'
    | 'detailedMetrics'
  >;
}

/**
 * The connector on Fargate: no inbound port, egress to WhatsApp and AWS only. Several tasks
 * share the accounts through shard leases (docs/design.md, Scale-out); the service scales on
 * memory between connectorMinCount and connectorMaxCount tasks.
 */
export class ConnectorService extends Construct {
  readonly cluster: ecs.Cluster;
  readonly service: ecs.FargateService;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ConnectorServiceProps) {
    super(scope, id);
    const { settings } = props;
    const arm = settings.connectorArchitecture === 'arm64';

    this.cluster = new ecs.Cluster(this, 'Cluster', {
      vpc: props.vpc,
      // Unset, the account's default setting applies (ECS turns it on account-wide if asked to).
      ...(settings.containerInsights ? { containerInsightsV2: ecs.ContainerInsights.ENABLED } : {}),
    });
    if (!settings.containerInsights) {
      acknowledge(
        this.cluster,
        'ECS4',
        'Container Insights is the containerInsights context option, off by default: about 35 custom metrics for this ' +
          'one-service cluster, some 10 USD a month. The free service metrics (CPU, memory, which the scaling uses) and the ' +
          "connector's own EMF metrics and alarms cover its operation.",
      );
    }
    this.taskDefinition = new ecs.FargateTaskDefinition(this, 'Task', {
      cpu: settings.connectorCpu,
      memoryLimitMiB: settings.connectorMemoryMiB,
      runtimePlatform: {
        cpuArchitecture: arm ? ecs.CpuArchitecture.ARM64 : ecs.CpuArchitecture.X86_64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
    });
    grantConnectorPermissions(this.taskDefinition.taskRole, props.resources);
    grantEventTargets(this.taskDefinition.taskRole, settings.eventTargetArns);

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const container = this.taskDefinition.addContainer('Connector', {
      // Staged at synth, built by `cdk deploy` (or a CI runner) for the task's architecture.
      image: ecs.ContainerImage.fromAsset(props.imageDirectory, {
        file: 'Dockerfile',
        platform: arm ? Platform.LINUX_ARM64 : Platform.LINUX_AMD64,
      }),
      environment: {
        ...runtimeEnvironment(props.resources, settings),
        // Only the connector drains it (connector/commands/legacy-drain.ts); the API never sends there.
        ...(props.resources.legacyCommandQueue ? { LEGACY_COMMAND_QUEUE_URL: props.resources.legacyCommandQueue.queueUrl } : {}),
        AWS_REGION: Stack.of(this).region,
        // Operations metrics as Embedded Metric Format log lines (CloudWatch extracts them).
        METRICS_EMF: 'true',
        ...(settings.detailedMetrics ? { METRICS_EMF_DETAIL: 'true' } : {}),
      },
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: 'connector', logGroup: this.logGroup }),
      readonlyRootFilesystem: true,
      // Time to hand back leases and close sockets after SIGTERM.
      stopTimeout: Duration.seconds(30),
    });
    // Media conversion (ffmpeg, sharp) writes temporary files; the root filesystem stays read-only.
    this.taskDefinition.addVolume({ name: 'tmp' });
    container.addMountPoints({ sourceVolume: 'tmp', containerPath: '/tmp', readOnly: false });
    acknowledge(
      this.taskDefinition,
      'ECS2',
      'The environment holds no secret: resource names and queue URLs, the shard count, log level and the webhook settings. ' +
        'The connector needs no key; the API key is read by the function alone, from Secrets Manager by ARN (apiKeySecretArn).',
    );
    if (this.taskDefinition.executionRole) {
      acknowledge(
        this.taskDefinition.executionRole,
        'IAM5[Resource::*]',
        'ecr:GetAuthorizationToken, which CDK grants to pull the image, has no resource-level permissions; ' +
          "the role's other statements name the image repository and the connector's log group.",
      );
    }

    const securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'WhatsApp connector: no inbound, egress to WhatsApp and AWS',
      allowAllOutbound: true,
    });
    this.service = new ecs.FargateService(this, 'Service', {
      cluster: this.cluster,
      taskDefinition: this.taskDefinition,
      desiredCount: settings.connectorDesiredCount,
      assignPublicIp: true,
      vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
      securityGroups: [securityGroup],
      circuitBreaker: { rollback: true },
      // A new task starts before the old one stops; the leases move accounts across.
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
    });
    if (settings.connectorMaxCount > settings.connectorMinCount) {
      // Memory is what accounts cost a connector (idle sockets, signal sessions); a new task gets
      // its share of the shards within about 30 s, a removed one hands its shards over on SIGTERM.
      const scaling = this.service.autoScaleTaskCount({ minCapacity: settings.connectorMinCount, maxCapacity: settings.connectorMaxCount });
      scaling.scaleOnMemoryUtilization('Memory', {
        targetUtilizationPercent: 70,
        scaleOutCooldown: Duration.minutes(2),
        // Scaling in moves accounts (a reconnect each): not more often than this.
        scaleInCooldown: Duration.minutes(15),
      });
    }
  }
}
