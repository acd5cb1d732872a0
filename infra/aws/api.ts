import { Duration, RemovalPolicy, Token } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { LambdaTarget } from 'aws-cdk-lib/aws-elasticloadbalancingv2-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { Config } from '../../core/config.js';
import { acknowledge, acknowledgeWildcardResources } from './acknowledge.js';
import { grantApiPermissions } from './permissions.js';
import { runtimeEnvironment, type GatewayResources } from './runtime-env.js';
import type { GatewaySettings } from './settings.js';

/** `<file>.<export>` of the bundle infra/build-lambda.ts writes (functions/lambda.ts `handler`). */
export const apiLambdaHandler = 'index.handler';

/**
 * One JSON line per request the HTTP API answers or refuses (an unsigned or unauthorized request
 * never reaches the function): who (the signing IAM principal), what, and the outcome.
 */
const accessLogFormat = {
  requestId: '$context.requestId',
  time: '$context.requestTimeEpoch',
  sourceIp: '$context.identity.sourceIp',
  caller: '$context.identity.userArn',
  method: '$context.httpMethod',
  path: '$context.path',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  error: '$context.error.message',
  integrationError: '$context.integrationErrorMessage',
};

export interface GatewayApiProps {
  /** The directory buildLambdaBundle wrote, as an asset. */
  readonly code: lambda.Code;
  /** `<file>.<export>` of the bundle's entry. */
  readonly handler: string;
  readonly resources: GatewayResources;
  readonly vpc: ec2.IVpc;
  readonly settings: Pick<
    GatewaySettings,
    | 'apiAccess'
    | 'privateApiCidr'
    | 'logLevel'
    | 'webhookAllowPrivate'
    | 'eventTargetArns'
    | 'apiKeySecretArn'
    | 'messageRetentionDays'
    | 'mediaRetentionDays'
  >;
}

/**
 * The Hono app as one Lambda function, reached either through an HTTP API with IAM
 * authorization (default) or, for private networks, an internal load balancer without auth.
 */
export class GatewayApi extends Construct {
  readonly function: lambda.Function;
  /** Base URL clients call. */
  readonly url: string;
  /** Attach to the users or roles that may call the API (IAM mode only). */
  readonly invokePolicy?: iam.ManagedPolicy;
  /** The HTTP API's access log (IAM mode only). */
  readonly accessLogGroup?: logs.LogGroup;

  constructor(scope: Construct, id: string, props: GatewayApiProps) {
    super(scope, id);

    const logGroup = new logs.LogGroup(this, 'FunctionLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // An own role instead of the default one, whose managed policy may write to any log group.
    const role = new iam.Role(this, 'FunctionRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'WhatsApp gateway API function',
    });
    logGroup.grantWrite(role);
    this.function = new lambda.Function(this, 'Function', {
      role,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      code: props.code,
      handler: props.handler,
      memorySize: 512,
      // A send waits for the connector up to SEND_TIMEOUT_MS (20 s); API Gateway stops at 30 s.
      timeout: Duration.seconds(29),
      environment: runtimeEnvironment(props.resources, props.settings),
      logGroup,
      ...(props.settings.apiKeySecretArn
        ? { paramsAndSecrets: lambda.ParamsAndSecretsLayerVersion.fromVersion(lambda.ParamsAndSecretsVersions.V1_0_103) }
        : {}),
    });
    acknowledge(
      this.function,
      'L1',
      'nodejs22.x, not nodejs24.x: the bundle is built for node22 (infra/build-lambda.ts), and the connector image, the ' +
        'toolchain and every test run on Node 22, which Lambda supports until its end of life (April 2027). ' +
        'The runtime moves with the rest of the project, not alone.',
    );
    grantApiPermissions(this.function, props.resources);
    if (props.settings.apiKeySecretArn) this.readAdminKeyFrom(props.settings.apiKeySecretArn, role);

    if (props.settings.apiAccess === 'iam') {
      const httpApi = new apigwv2.HttpApi(this, 'HttpApi', {
        description: 'WhatsApp gateway REST API (IAM-authorized)',
        defaultIntegration: new HttpLambdaIntegration('Function', this.function),
        defaultAuthorizer: new HttpIamAuthorizer(),
        // Created below, the same `$default` stage (same id), with access logs.
        createDefaultStage: false,
      });
      this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      httpApi.addStage('DefaultStage', {
        autoDeploy: true,
        accessLogSettings: {
          destination: new apigwv2.LogGroupLogDestination(this.accessLogGroup),
          format: apigw.AccessLogFormat.custom(JSON.stringify(accessLogFormat)),
        },
      });
      this.url = httpApi.apiEndpoint;
      const invokeArn = httpApi.arnForExecuteApi();
      this.invokePolicy = new iam.ManagedPolicy(this, 'InvokePolicy', {
        description: 'Allows calling the WhatsApp gateway API',
        statements: [new iam.PolicyStatement({ actions: ['execute-api:Invoke'], resources: [invokeArn] })],
      });
      acknowledgeWildcardResources(
        this.invokePolicy,
        [invokeArn],
        'Every stage, method and path of this one API: its single $default route sends them all to the function, and this ' +
          'is the policy that lets a caller use the API.',
      );
    } else {
      this.url = `http://${this.privateLoadBalancer(props).loadBalancerDnsName}`;
    }
  }

  /** functions/http/admin-key-secret.ts reads the secret through the extension (`paramsAndSecrets`) at cold start. */
  private readAdminKeyFrom(secretArn: string, role: iam.Role): void {
    this.function.addEnvironment('API_KEY_SECRET_ARN' satisfies keyof Config, secretArn);
    role.addToPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secretArn] }));
  }

  private privateLoadBalancer(props: GatewayApiProps): elbv2.ApplicationLoadBalancer {
    const securityGroup = new ec2.SecurityGroup(this, 'LoadBalancerSecurityGroup', {
      vpc: props.vpc,
      description: 'Gateway API: reachable from the private network only',
      allowAllOutbound: false,
    });
    const allowedRange = props.settings.privateApiCidr ?? props.vpc.vpcCidrBlock;
    securityGroup.addIngressRule(ec2.Peer.ipv4(allowedRange), ec2.Port.tcp(80), 'private network clients');
    if (Token.isUnresolved(allowedRange)) {
      // A range given in privateApiCidr is a literal the rule checks itself.
      acknowledge(
        securityGroup,
        'EC23',
        "Port 80 is open to the VPC's own range only (a reference the rule cannot read, so it reports an error), never to 0.0.0.0/0.",
      );
    }

    const loadBalancer = new elbv2.ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc: props.vpc,
      internetFacing: false,
      securityGroup,
      // The VPC has public subnets only; an internal load balancer there still gets private IPs only.
      vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
      dropInvalidHeaderFields: true,
    });
    loadBalancer.addListener('Http', { port: 80, open: false }).addTargets('Function', { targets: [new LambdaTarget(this.function)] });
    acknowledge(
      loadBalancer,
      'ELB2',
      'The function logs every request it serves (method, path, status, duration: functions/http/request-log.ts). Load ' +
        "balancer access logs need a bucket policy naming the region's Elastic Load Balancing account, which this " +
        'region-agnostic stack cannot name (CDK refuses them without a region).',
    );
    return loadBalancer;
  }
}
