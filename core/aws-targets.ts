/**
 * AWS event targets (docs/webhooks.md, AWS targets): a registration whose `url` is the ARN of an
 * SQS queue or of an EventBridge event bus instead of an http(s) URL. The ARN is parsed here;
 * EVENT_TARGET_ARNS patterns allow targets, checked at registration
 * (functions/webhooks/registrations.ts) and again at every delivery (connector/webhooks/targets/),
 * and the CDK app grants the connector exactly those patterns (infra/aws/permissions.ts).
 *
 *   arn:aws:sqs:<region>:<account>:<queue>                 queue: 1-80 of A-Z a-z 0-9 _ -, or ending in .fifo
 *   arn:aws:events:<region>:<account>:event-bus/<name>     name: 1-256 of A-Z a-z 0-9 . _ - /
 *
 * `aws` may also be `aws-cn` or `aws-us-gov`, each with its own regions.
 */

const PARTITIONS = ['aws', 'aws-cn', 'aws-us-gov'] as const;
type Partition = (typeof PARTITIONS)[number];

/** The regions of each partition, by shape (a new region of a known shape needs no change here). */
const REGIONS: Record<Partition, RegExp> = {
  aws: /^(?!cn-|us-gov-)[a-z]{2}-[a-z]+-\d{1,2}$/,
  'aws-cn': /^cn-[a-z]+-\d{1,2}$/,
  'aws-us-gov': /^us-gov-[a-z]+-\d{1,2}$/,
};
const ACCOUNT = /^\d{12}$/;
/** SQS: up to 80 characters, the `.fifo` suffix included. */
const QUEUE_NAME = /^(?:[A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\.fifo)$/;
const EVENT_BUS_PREFIX = 'event-bus/';
const EVENT_BUS_NAME = /^[A-Za-z0-9._/-]{1,256}$/;

interface ArnParts {
  arn: string;
  partition: Partition;
  region: string;
  account: string;
}
export type SqsTarget = ArnParts & { service: 'sqs'; queueName: string; fifo: boolean };
export type EventBusTarget = ArnParts & { service: 'events'; busName: string };
export type AwsTarget = SqsTarget | EventBusTarget;

/** What the API answers for an ARN that EVENT_TARGET_ARNS does not allow. */
export const TARGET_NOT_ALLOWED = 'target not allowed';

/** Whether a registration's `url` is meant as an AWS target (then it must parse as one). */
export function isArn(value: string): boolean {
  return value.startsWith('arn:');
}

const isPartition = (value: string | undefined): value is Partition => PARTITIONS.includes(value as Partition);

/** The target an ARN names, or undefined when it is not an SQS queue or event bus ARN of a known partition. */
export function parseAwsTarget(arn: string): AwsTarget | undefined {
  const [prefix, partition, service, region = '', account = '', resource = '', ...rest] = arn.split(':');
  if (prefix !== 'arn' || rest.length > 0 || !isPartition(partition)) return undefined;
  if (!REGIONS[partition].test(region) || !ACCOUNT.test(account)) return undefined;
  const parts = { arn, partition, region, account };
  if (service === 'sqs') {
    return QUEUE_NAME.test(resource) ? { ...parts, service, queueName: resource, fifo: resource.endsWith('.fifo') } : undefined;
  }
  if (service === 'events' && resource.startsWith(EVENT_BUS_PREFIX)) {
    const busName = resource.slice(EVENT_BUS_PREFIX.length);
    return EVENT_BUS_NAME.test(busName) ? { ...parts, service, busName } : undefined;
  }
  return undefined;
}

/**
 * The queue's URL on AWS, derived from its ARN (no GetQueueUrl: that would need a permission on
 * the queue beyond SendMessage, and a request per queue).
 */
export function sqsQueueUrl(target: SqsTarget): string {
  const domain = target.partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com';
  return `https://sqs.${target.region}.${domain}/${target.account}/${target.queueName}`;
}

/**
 * An EVENT_TARGET_ARNS entry: an ARN of either form in which `*` stands for any run of characters
 * (as in an IAM resource). Its partition and service are literal (the CDK app grants
 * `sqs:SendMessage` or `events:PutEvents` by them), and an event bus pattern names `event-bus/...`.
 */
const PATTERN_SEGMENTS = {
  region: /^[a-z0-9*-]+$/,
  account: /^(?:\d{12}|[0-9*]*\*[0-9*]*)$/,
  sqs: /^[A-Za-z0-9_.*-]+$/,
  events: /^event-bus\/[A-Za-z0-9._/*-]+$/,
};

/** The service an EVENT_TARGET_ARNS pattern allows, or undefined for a malformed pattern. */
export function targetPatternService(pattern: string): AwsTarget['service'] | undefined {
  const [prefix, partition, service, region = '', account = '', resource = '', ...rest] = pattern.split(':');
  if (prefix !== 'arn' || rest.length > 0 || !isPartition(partition)) return undefined;
  if (!PATTERN_SEGMENTS.region.test(region) || !PATTERN_SEGMENTS.account.test(account)) return undefined;
  if (service === 'sqs' && PATTERN_SEGMENTS.sqs.test(resource)) return service;
  if (service === 'events' && PATTERN_SEGMENTS.events.test(resource)) return service;
  return undefined;
}

/**
 * A comma-separated EVENT_TARGET_ARNS value as its patterns (blanks around entries ignored), or the
 * entries that are not patterns.
 */
export function parseTargetPatterns(text: string): { ok: true; patterns: string[] } | { ok: false; invalid: string[] } {
  const patterns = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const invalid = patterns.filter((pattern) => targetPatternService(pattern) === undefined);
  return invalid.length > 0 ? { ok: false, invalid } : { ok: true, patterns };
}

const compiled = new Map<string, RegExp>();
function patternRegExp(pattern: string): RegExp {
  let regExp = compiled.get(pattern);
  if (!regExp) {
    const source = pattern
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
      .join('.*');
    regExp = new RegExp(`^${source}$`);
    compiled.set(pattern, regExp);
  }
  return regExp;
}

/** Whether an ARN is allowed: some pattern matches it whole, `*` standing for any run of characters. */
export function targetAllowed(arn: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => patternRegExp(pattern).test(arn));
}
