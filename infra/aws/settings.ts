import { z } from 'zod';
import { parseTargetPatterns } from '../../core/aws-targets.js';

/**
 * Deployment choices, read from CDK context (`-c key=value` or cdk.json "context"), validated
 * once so a typo fails synthesis with a clear message instead of deploying something else.
 * Context values given on the command line are strings, hence the coercions.
 */
const optionalText = z.preprocess((v) => (v === '' ? undefined : v), z.string().optional());
const optionalDays = z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(36_500).optional());
const booleanFlag = (fallback: boolean) =>
  z
    .union([z.boolean(), z.enum(['true', 'false'])])
    .default(fallback)
    .transform((v) => v === true || v === 'true');

const sqsUrl = z.string().regex(/^https:\/\/sqs\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/\d{12}\/[A-Za-z0-9_-]+(\.fifo)?$/, {
  message: 'must be an SQS queue URL such as https://sqs.eu-west-1.amazonaws.com/123456789012/name',
});

const gatewaySettingsSchema = z.object({
  /**
   * `iam` (default): HTTP API whose routes require SigV4-signed requests (IAM authorization).
   * `private`: no authentication, served by an internal Application Load Balancer reachable only
   * from inside the VPC (or from `privateApiCidr`), for teams whose private network is the
   * access control the API assumes (docs/deploy-aws.md, API access).
   */
  apiAccess: z.enum(['iam', 'private']).default('iam'),
  /** Who may reach the internal load balancer in `private` mode; defaults to the VPC's range. */
  privateApiCidr: optionalText,
  /**
   * A Secrets Manager secret (full ARN) whose SecretString is `API_KEY`: the function reads it at
   * cold start through the Parameters and Secrets extension, allowed GetSecretValue on it only.
   */
  apiKeySecretArn: optionalText.pipe(
    z
      .string()
      .regex(/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/, {
        message: 'must be the full ARN of a Secrets Manager secret',
      })
      .optional(),
  ),

  /** CPU architecture of the connector task; the image is built for it (see the Dockerfile). */
  connectorArchitecture: z.enum(['arm64', 'x86_64']).default('arm64'),
  connectorDesiredCount: z.coerce.number().int().min(0).max(10).default(1),
  /**
   * Scaling of the connector service on memory (accounts cost memory, about 0.5 MB each when
   * idle): between these task counts, targeting 70 % memory. Equal: no scaling.
   */
  connectorMinCount: z.coerce.number().int().min(0).max(10).default(1),
  connectorMaxCount: z.coerce.number().int().min(1).max(10).default(3),
  /**
   * Shards accounts hash to, each with its own FIFO command queue (docs/design.md, Scale-out).
   * Default 32; with `existingCommandQueueUrl` it is 1 (that one queue).
   */
  commandShards: z.coerce.number().int().min(1).max(64).optional(),
  /**
   * Upgrading a stack from before shards: keep its single command queue (same resource, so
   * CloudFormation does not delete it with the commands still in it) for the connector to drain
   * into the shard queues (docs/deploy-aws.md). Deploy again without it once drained.
   */
  keepSingleCommandQueue: booleanFlag(false),
  connectorCpu: z.coerce
    .number()
    .int()
    .refine((v) => [256, 512, 1024, 2048, 4096].includes(v), {
      message: 'must be a Fargate CPU size: 256, 512, 1024, 2048 or 4096',
    })
    .default(512),
  connectorMemoryMiB: z.coerce.number().int().min(512).max(30720).default(1024),

  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
  /**
   * Let webhooks target private addresses (receivers inside the VPC or a peered network).
   * Default false; metadata and link-local addresses stay refused either way.
   */
  webhookAllowPrivate: booleanFlag(false),
  /**
   * AWS event targets webhooks may name (docs/webhooks.md, AWS targets): SQS queue and EventBridge
   * bus ARNs, comma-separated (or a list in cdk.json), `*` matching any run of characters. Set as
   * EVENT_TARGET_ARNS on the API and the connector; the connector's role may send to exactly these.
   */
  eventTargetArns: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return [];
      const parsed = parseTargetPatterns(Array.isArray(value) ? value.join(',') : value);
      if (parsed.ok) return parsed.patterns;
      ctx.addIssue({
        code: 'custom',
        message: `not an SQS queue or EventBridge event bus ARN pattern: ${parsed.invalid.join(', ')} (e.g. arn:aws:sqs:eu-west-1:123456789012:orders-*)`,
      });
      return z.NEVER;
    }),
  /** Receives the dead-letter alarms by e-mail (an SNS subscription to confirm once). */
  alarmEmail: optionalText.pipe(z.email().optional()),
  /**
   * VPC flow logs (every accepted and rejected connection of the connector's network) into a log
   * group kept a month. Off by default: billed per GB written (docs/deploy-aws.md, Options).
   */
  vpcFlowLogs: booleanFlag(false),
  /**
   * CloudWatch Container Insights on the connector's cluster (per-task CPU, memory, network and
   * storage metrics). Off by default: about 35 custom metrics, some 10 USD a month (docs/deploy-aws.md, Options).
   */
  containerInsights: booleanFlag(false),
  /**
   * The connector's detail metrics in its EMF line (METRICS_EMF_DETAIL): six more custom metrics,
   * 1.80 USD a month (docs/connector.md, Metrics). Off: the four that nothing free shows.
   */
  detailedMetrics: booleanFlag(false),
  /**
   * Retention (docs/deploy-aws.md, Retention): days a message (and its chat) is kept after its
   * time, and days a media file is kept after it was stored. Unset: kept forever. Set as
   * MESSAGE_RETENTION_DAYS and MEDIA_RETENTION_DAYS on the API and the connector; media also
   * through a lifecycle rule of a bucket the stack creates (DynamoDB TTL is always on).
   */
  messageRetentionDays: optionalDays,
  mediaRetentionDays: optionalDays,
  /** Keep the table and bucket when the stack is deleted (default) or delete them with it. */
  retainData: booleanFlag(true),

  /** Existing infrastructure to use instead of creating it. */
  existingTableName: optionalText,
  existingBucketName: optionalText,
  existingCommandQueueUrl: optionalText.pipe(sqsUrl.optional()),
  existingWebhookQueueUrl: optionalText.pipe(sqsUrl.optional()),
  /** The existing webhook queue's dead-letter queue: the connector moves given-up events there. */
  existingWebhookDeadLetterQueueUrl: optionalText.pipe(sqsUrl.optional()),
});

const DEFAULT_COMMAND_SHARDS = 32;

export type GatewaySettings = Omit<z.infer<typeof gatewaySettingsSchema>, 'commandShards'> & { commandShards: number };
export type GatewaySettingsInput = z.input<typeof gatewaySettingsSchema>;

class GatewaySettingsError extends Error {
  override name = 'GatewaySettingsError';
}

/** Context keys the app reads: the schema's keys, so docs and code cannot drift apart. */
export const gatewayContextKeys = Object.keys(gatewaySettingsSchema.shape) as (keyof GatewaySettings)[];

export function parseGatewaySettings(input: Record<string, unknown>): GatewaySettings {
  const parsed = gatewaySettingsSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new GatewaySettingsError(`Invalid CDK context: ${problems}`);
  }
  if (parsed.data.existingCommandQueueUrl && !parsed.data.existingCommandQueueUrl.endsWith('.fifo')) {
    throw new GatewaySettingsError('Invalid CDK context: existingCommandQueueUrl must name a FIFO queue (.fifo)');
  }
  if (parsed.data.existingCommandQueueUrl && (parsed.data.commandShards ?? 1) > 1) {
    throw new GatewaySettingsError('Invalid CDK context: an existing command queue is one shard (leave commandShards unset or 1)');
  }
  if (parsed.data.keepSingleCommandQueue && (parsed.data.existingCommandQueueUrl || parsed.data.commandShards === 1)) {
    throw new GatewaySettingsError('Invalid CDK context: keepSingleCommandQueue is for a stack moving to several command shards');
  }
  if (parsed.data.connectorMinCount > parsed.data.connectorMaxCount) {
    throw new GatewaySettingsError('Invalid CDK context: connectorMinCount must not exceed connectorMaxCount');
  }
  return { ...parsed.data, commandShards: parsed.data.commandShards ?? (parsed.data.existingCommandQueueUrl ? 1 : DEFAULT_COMMAND_SHARDS) };
}
