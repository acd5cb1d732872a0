import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Findings of the AWS Solutions checks (cdk-nag's AwsSolutions pack, run over the synthesized app
 * by test/infra/aws/nag.test.ts) that this stack accepts, each with its reason. They are recorded
 * on the construct through CDK's own Validations, so any run of the checks, ours or a reviewer's,
 * reports them as acknowledged rather than as findings; docs/deploy-aws.md lists every one.
 * Nothing here depends on cdk-nag: acknowledgements are construct metadata, not template content.
 */
export function acknowledge(scope: IConstruct, rule: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions-${rule}`, reason });
}

/**
 * AwsSolutions-IAM5 reports each wildcard resource of an Allow statement as its own finding,
 * `IAM5[Resource::<arn>]`, the ARN written with references as `<LogicalId.Attribute>` and
 * `<Ref>`; acknowledged one by one on the role (or policy) that holds the statement. ARNs without
 * a `*` have no finding and are skipped.
 */
export function acknowledgeWildcardResources(scope: IConstruct, arns: readonly string[], reason: string): void {
  for (const arn of arns) {
    const written = flattenReference(Stack.of(scope).resolve(arn));
    if (written.includes('*')) acknowledge(scope, `IAM5[Resource::${written}]`, reason);
  }
}

/** A resolved CloudFormation value as one string: joins joined, `Fn::GetAtt` as `<Id.Attr>`, `Ref` as `<Id>`. */
function flattenReference(value: unknown): string {
  if (typeof value === 'string') return value.replaceAll('${', '<').replaceAll('}', '>');
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const intrinsic = value as Record<string, unknown>;
  const join = intrinsic['Fn::Join'];
  if (Array.isArray(join)) {
    const [delimiter, parts] = join as [string, unknown[]];
    return parts.map(flattenReference).join(delimiter);
  }
  if (intrinsic['Fn::Sub'] !== undefined) return flattenReference(intrinsic['Fn::Sub']);
  const getAtt = intrinsic['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return `<${getAtt.map(flattenReference).join('.')}>`;
  if (intrinsic.Ref !== undefined) return `<${flattenReference(intrinsic.Ref)}>`;
  return JSON.stringify(value);
}
