import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';

/**
 * A VPC with public subnets only: the connector reaches WhatsApp and AWS through the internet
 * gateway with a public IP and no inbound rule, which saves the NAT gateway's fixed hourly cost.
 * DynamoDB and S3 traffic stays on free gateway endpoints.
 */
export class GatewayNetwork extends Construct {
  readonly vpc: ec2.Vpc;

  constructor(scope: Construct, id: string) {
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
  }
}
