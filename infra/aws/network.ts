import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { acknowledge } from './acknowledge.js';

export interface GatewayNetworkProps {
  /** Flow logs of the VPC into a log group (`vpcFlowLogs`, billed per GB written). */
  readonly flowLogs: boolean;
}

/**
 * A VPC with public subnets only: the connector reaches WhatsApp and AWS through the internet
 * gateway with a public IP and no inbound rule, which saves the NAT gateway's fixed hourly cost.
 * DynamoDB and S3 traffic stays on free gateway endpoints.
 */
export class GatewayNetwork extends Construct {
  readonly vpc: ec2.Vpc;

  constructor(scope: Construct, id: string, props: GatewayNetworkProps) {
    super(scope, id);
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 }],
      gatewayEndpoints: {
        DynamoDb: { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB },
        S3: { service: ec2.GatewayVpcEndpointAwsService.S3 },
      },
      // Restricting the default group needs a custom-resource Lambda; nothing here uses that group.
      restrictDefaultSecurityGroup: false,
    });
    if (props.flowLogs) {
      const flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      this.vpc.addFlowLog('FlowLog', {
        destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup),
        trafficType: ec2.FlowLogTrafficType.ALL,
        maxAggregationInterval: ec2.FlowLogMaxAggregationInterval.TEN_MINUTES,
      });
    } else {
      acknowledge(
        this.vpc,
        'VPC7',
        'Flow logs are the vpcFlowLogs context option, off by default: billed per GB written (0.50 USD/GB into CloudWatch Logs), ' +
          'a cost that grows with traffic and with the scans every public IP receives. The connector has no inbound rule at all.',
      );
    }
  }
}
