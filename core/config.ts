import { z } from 'zod';

/**
 * Every setting the gateway reads, parsed once from the environment. Where AWS lives is chosen
 * by the AWS SDK's own variables (AWS_REGION, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB,
 * AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_S3): the SDK reads them itself, we only report them.
 */
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);
const optionalString = z.preprocess(emptyAsUndefined, z.string().optional());

export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  AWS_REGION: z.string().default('us-east-1'),
  AWS_ENDPOINT_URL: optionalString,
  AWS_ENDPOINT_URL_DYNAMODB: optionalString,
  AWS_ENDPOINT_URL_SQS: optionalString,
  AWS_ENDPOINT_URL_S3: optionalString,
  /** Read here only so a config built from an explicit env (tests, emulators) carries them. */
  AWS_ACCESS_KEY_ID: optionalString,
  AWS_SECRET_ACCESS_KEY: optionalString,

  TABLE_NAME: z.string().min(3).default('wa-gateway'),
  MEDIA_BUCKET: z.string().min(3).default('wa-gateway-media'),
  COMMAND_QUEUE_NAME: z.string().endsWith('.fifo').default('wa-gateway-commands.fifo'),
  COMMAND_DLQ_NAME: z.string().endsWith('.fifo').default('wa-gateway-commands-dlq.fifo'),
  WEBHOOK_QUEUE_NAME: z.string().default('wa-gateway-webhooks'),
  WEBHOOK_DLQ_NAME: z.string().default('wa-gateway-webhooks-dlq'),
  /** When set (existing infrastructure, CDK outputs), used as is instead of resolving by name. */
  COMMAND_QUEUE_URL: optionalString,
  WEBHOOK_QUEUE_URL: optionalString,
  /** Create the table, bucket and queues at start when absent (local stacks; off on AWS). */
  CREATE_RESOURCES: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true'),

  /** How long a send waits for the connector to record `sent` or `failed`. */
  SEND_TIMEOUT_MS: positiveInt(20_000),
  MAX_UPLOAD_BYTES: positiveInt(50 * 1024 * 1024),

  /**
   * Webhook delivery: a POST gives up after WEBHOOK_TIMEOUT_MS; a failed delivery is retried
   * after WEBHOOK_RETRY_BASE_MS * 2^(attempt-1) (plus up to 25% jitter) until
   * WEBHOOK_MAX_ATTEMPTS attempts, then goes to the dead-letter queue. Defaults: 10 attempts,
   * waits of 30 s, 1, 2, 4, 8, 16, 32 min, 1 h 4 min, 2 h 8 min: at least 4 h 15 min before
   * giving up. Attempts are SQS receives, so the queue's redrive maxReceiveCount must be at
   * least WEBHOOK_MAX_ATTEMPTS (core/resources.ts and the CDK stack use 15).
   */
  WEBHOOK_TIMEOUT_MS: positiveInt(10_000),
  WEBHOOK_RETRY_BASE_MS: positiveInt(30_000),
  WEBHOOK_MAX_ATTEMPTS: positiveInt(10),
  /**
   * Circuit per receiver URL (connector/webhooks/circuit.ts): after WEBHOOK_CIRCUIT_FAILURES
   * failed POSTs in a row the URL's events are parked (each still on its own retry schedule,
   * no POST) and one probe event tests the URL after WEBHOOK_PROBE_BASE_MS, doubling up to
   * WEBHOOK_PROBE_MAX_MS. Its first 2xx makes the parked events visible again at once, so a
   * receiver that came back gets its backlog within about WEBHOOK_PROBE_MAX_MS plus a few seconds.
   */
  WEBHOOK_CIRCUIT_FAILURES: positiveInt(5),
  WEBHOOK_PROBE_BASE_MS: positiveInt(5_000),
  WEBHOOK_PROBE_MAX_MS: positiveInt(30_000),
  /** Also post messages the account sent itself (from the phone or the API); default: received only. */
  WEBHOOK_INCLUDE_FROM_ME: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true'),

  /** Sandbox network (all three, or none for real WhatsApp). */
  WA_WS_URL: optionalString,
  WA_ROOT_PUBLIC_KEY: z.preprocess(emptyAsUndefined, z.string().regex(/^[0-9a-fA-F]{64}$/).optional()),
  WA_MEDIA_CA_FILE: optionalString,
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

/** True when the AWS SDK would talk to real AWS (no endpoint override anywhere). */
export function usesDefaultAwsEndpoints(config: Config): boolean {
  return !(
    config.AWS_ENDPOINT_URL ||
    config.AWS_ENDPOINT_URL_DYNAMODB ||
    config.AWS_ENDPOINT_URL_SQS ||
    config.AWS_ENDPOINT_URL_S3
  );
}
