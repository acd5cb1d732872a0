import { type IPolicyValidationPlugin, type PolicyValidationPluginReport, Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import type { GatewaySettingsInput } from '../../../infra/aws/settings.js';
import { createSynthDirectory, synthGateway, type SynthesizedGateway } from './synth-gateway.js';

/**
 * The stack as AWS reviewers judge it: cdk-nag's AwsSolutions pack, registered as CDK's policy
 * validation plugin (`Validations.of(app).addPlugins`) and run by the synthesis itself, over the
 * default context and every option that adds or changes resources. Findings the stack accepts are
 * acknowledged in infra/aws/ with their reason (infra/aws/acknowledge.ts); docs/deploy-aws.md,
 * "AWS Solutions checks (cdk-nag)", lists each one.
 */
const scratch = createSynthDirectory();
afterAll(() => scratch.remove());

const account = '123456789012';
const contexts: [string, GatewaySettingsInput][] = [
  ['the default context', {}],
  ['apiAccess=private (internal load balancer open to the VPC range)', { apiAccess: 'private' }],
  ['apiAccess=private with privateApiCidr', { apiAccess: 'private', privateApiCidr: '10.20.0.0/16' }],
  ['apiKeySecretArn', { apiKeySecretArn: `arn:aws:secretsmanager:eu-west-1:${account}:secret:wa-gateway-api-key-AbCdEf` }],
  [
    'eventTargetArns with wildcard patterns',
    {
      eventTargetArns: [
        `arn:aws:sqs:eu-west-1:${account}:orders`,
        `arn:aws:sqs:*:${account}:audit-*.fifo`,
        `arn:aws:events:eu-west-1:${account}:event-bus/gateway-*`,
      ],
    },
  ],
  [
    'existing table, bucket and queues',
    {
      existingTableName: 'team-wa-table',
      existingBucketName: 'team-wa-media',
      existingCommandQueueUrl: `https://sqs.eu-west-1.amazonaws.com/${account}/team-commands.fifo`,
      existingWebhookQueueUrl: `https://sqs.eu-west-1.amazonaws.com/${account}/team-webhooks`,
      existingWebhookDeadLetterQueueUrl: `https://sqs.eu-west-1.amazonaws.com/${account}/team-webhooks-dlq`,
    },
  ],
  ['retainData=false (buckets emptied and deleted with the stack)', { retainData: 'false' }],
  ['commandShards=1', { commandShards: '1' }],
  ['keepSingleCommandQueue', { keepSingleCommandQueue: 'true' }],
  ['alarmEmail', { alarmEmail: 'ops@example.com' }],
  ['vpcFlowLogs and containerInsights', { vpcFlowLogs: 'true', containerInsights: 'true' }],
];

interface Checked {
  /** Absent when a finding failed the synthesis. */
  gateway?: SynthesizedGateway;
  report: PolicyValidationPluginReport;
}

let run = 0;

/** Synthesizes with the AwsSolutions pack registered as CDK registers a validation plugin, keeping the report it gave. */
function synthChecked(context: GatewaySettingsInput): Checked {
  const checks = new AwsSolutionsChecks(undefined, { verbose: true });
  const reports: PolicyValidationPluginReport[] = [];
  const plugin: IPolicyValidationPlugin = {
    name: checks.name,
    validate: (validationContext) => {
      const report = checks.validate(validationContext);
      reports.push(report);
      return report;
    },
  };
  let gateway: SynthesizedGateway | undefined;
  let failure: unknown;
  try {
    gateway = synthGateway(
      context,
      { outdir: `${scratch.outdir}-${run++}`, bundle: scratch.placeholderBundle },
      { validationPlugins: [plugin] },
    );
  } catch (error) {
    // An error finding fails the synthesis; the report says which.
    failure = error;
  }
  const [report] = reports;
  if (!report) throw failure ?? new Error('the AwsSolutions checks did not run during synthesis');
  return gateway ? { gateway, report } : { report };
}

/** The synthesized stack, once the checks found nothing (else the failure lists the findings). */
function synthClean(context: GatewaySettingsInput): SynthesizedGateway {
  const { gateway, report } = synthChecked(context);
  expect(findings(report, 'error')).toEqual([]);
  expect(findings(report, 'warning')).toEqual([]);
  if (!gateway) throw new Error('synthesis failed');
  return gateway;
}

/** `<rule> at <construct path>: <why>` for each finding of the given severity. */
function findings(report: PolicyValidationPluginReport, severity: 'error' | 'warning'): string[] {
  return report.violations
    .filter((violation) => violation.severity === severity)
    .flatMap((violation) =>
      violation.violatingResources.map((resource) => `${violation.ruleName} at ${resource.constructPath}: ${violation.description}`),
    );
}

describe('cdk-nag AwsSolutions with no unsuppressed finding', () => {
  it.each(contexts)('%s', (_, context) => {
    const { report } = synthChecked(context);
    expect(findings(report, 'error')).toEqual([]);
    expect(findings(report, 'warning')).toEqual([]);
    expect(report.violations).toEqual([]);
  });

  it('the checks do run and report: a bucket without server access logs added to the default stack is found', () => {
    const checks = new AwsSolutionsChecks(undefined, { verbose: true });
    const { stack } = synthClean({});
    new s3.Bucket(stack, 'Unlogged', { enforceSSL: true });
    const report = checks.validateScope(stack);
    expect(findings(report, 'error')).toEqual([expect.stringMatching(/^AwsSolutions-S1 at WaGatewayTest\/Unlogged\/Resource: /)]);
  });
});

/** Every AwsSolutions acknowledgement in the tree: `<construct path relative to the stack> <rule>` -> reason. */
function acknowledgements(root: IConstruct): Map<string, string> {
  const found = new Map<string, string>();
  for (const construct of root.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        // CDK acknowledges rules of its own (CloudFormation-Validate::…); ours are AwsSolutions-….
        const rule = /^annotation::AwsSolutions-(.+)$/i.exec(id)?.[1];
        if (rule) found.set(`${construct.node.path.replace(/^WaGatewayTest\//, '')} ${rule}`, reason);
      }
    }
  }
  return found;
}

describe('what the stack acknowledges instead of fixing', () => {
  it('by default: flow logs, Container Insights, the runtime, the task environment and the IAM wildcards, each with its reason', () => {
    const acknowledged = acknowledgements(synthClean({}).stack);
    expect([...acknowledged.keys()].sort()).toEqual(
      [
        'Network/Vpc VPC7',
        'Api/Function L1',
        'Api/FunctionRole IAM5[Resource::<DataMediaBucketC84E36E3.Arn>/accounts/*/uploads/*]',
        'Api/FunctionRole IAM5[Resource::<DataMediaBucketC84E36E3.Arn>/accounts/*/media/*]',
        'Api/FunctionRole IAM5[Resource::<DataMediaBucketC84E36E3.Arn>/accounts/*]',
        'Api/InvokePolicy IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<ApiHttpApi4C294DC0>/*/*/*]',
        'Connector/Cluster ECS4',
        'Connector/Task ECS2',
        'Connector/Task/ExecutionRole IAM5[Resource::*]',
        'Connector/Task/TaskRole IAM5[Resource::<DataMediaBucketC84E36E3.Arn>/accounts/*]',
      ].sort(),
    );
    // A reason says why for this stack, not just that the rule was looked at.
    for (const [rule, reason] of acknowledged) expect(reason.length, rule).toBeGreaterThan(80);
  });

  it('with vpcFlowLogs and containerInsights there is nothing to acknowledge about them: the VPC has a flow log, the cluster Container Insights', () => {
    const rules = [...acknowledgements(synthClean({ vpcFlowLogs: 'true', containerInsights: 'true' }).stack).keys()];
    expect(rules.filter((rule) => /VPC7|ECS4/.test(rule))).toEqual([]);
  });

  it('private mode: the load balancer (no access logs) and, for the VPC range the rule cannot read, its security group', () => {
    const vpcRange = acknowledgements(synthClean({ apiAccess: 'private' }).stack);
    expect([...vpcRange.keys()].filter((rule) => rule.startsWith('Api/Load'))).toEqual([
      'Api/LoadBalancerSecurityGroup EC23',
      'Api/LoadBalancer ELB2',
    ]);
    // A range given in privateApiCidr is a literal the rule checks itself.
    const literal = acknowledgements(synthClean({ apiAccess: 'private', privateApiCidr: '10.20.0.0/16' }).stack);
    expect([...literal.keys()].filter((rule) => rule.startsWith('Api/Load'))).toEqual(['Api/LoadBalancer ELB2']);
  });

  it('eventTargetArns: exactly the patterns with a wildcard, on the task role', () => {
    const { stack } = synthClean({
      eventTargetArns: `arn:aws:sqs:eu-west-1:${account}:orders,arn:aws:events:eu-west-1:${account}:event-bus/gateway-*`,
    });
    const targets = [...acknowledgements(stack).keys()].filter((rule) => rule.includes(account));
    expect(targets).toEqual([`Connector/Task/TaskRole IAM5[Resource::arn:aws:events:eu-west-1:${account}:event-bus/gateway-*]`]);
  });
});
