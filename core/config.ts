import { z } from 'zod';
import { parseTargetPatterns } from './aws-targets.js';

/**
 * Every setting the gateway reads, parsed once from the environment. Where AWS lives is chosen
 * by the AWS SDK's own variables (AWS_REGION, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB,
 * AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_S3): the SDK reads them itself, we only report them.
 */
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);
const optionalString = z.preprocess(emptyAsUndefined, z.string().optional());
const optionalPositiveInt = z.preprocess(emptyAsUndefined, z.coerce.number().int().positive().max(36_500).optional());
const optionalPort = z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).optional());
const optionalHttpUrl = z.preprocess(emptyAsUndefined, z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional());
const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('API port (`0`: any free port)'),
  HOST: z.string().default('127.0.0.1').describe('API listen address'),
  DATA_DIR: z.string().default('./data').describe('Where the embedded emulators of `npm start` keep their data'),
  LOG_LEVEL: logLevel.default('info').describe('pino level: fatal, error, warn, info, debug, trace or silent'),

  AWS_REGION: z.string().default('us-east-1').describe('Region of every AWS client'),
  AWS_ENDPOINT_URL: optionalString.describe('One endpoint for all services (LocalStack); turns the embedded stack off'),
  AWS_ENDPOINT_URL_DYNAMODB: optionalString.describe('DynamoDB endpoint; any per-service endpoint turns the embedded stack off'),
  AWS_ENDPOINT_URL_SQS: optionalString.describe('SQS endpoint'),
  AWS_ENDPOINT_URL_S3: optionalString.describe('S3 endpoint (e.g. MinIO)'),
  AWS_ENDPOINT_URL_EVENTBRIDGE: optionalString.describe(
    'EventBridge endpoint of the connector (LocalStack, or a test double); unset: AWS_ENDPOINT_URL, else AWS',
  ),
  /** Read here only so a config built from an explicit env (tests, emulators) carries them. */
  AWS_ACCESS_KEY_ID: optionalString.describe("Static credentials; otherwise the SDK's default chain"),
  AWS_SECRET_ACCESS_KEY: optionalString.describe('Secret of the static credentials'),

  TABLE_NAME: z.string().min(3).default('wa-gateway').describe('DynamoDB table (`pk`/`sk`, index `gsi1`, TTL `expiresAt`)'),
  MEDIA_BUCKET: z.string().min(3).default('wa-gateway-media').describe('S3 bucket for media and uploads'),
  COMMAND_QUEUE_NAME: z.string().endsWith('.fifo').default('wa-gateway-commands.fifo').describe('FIFO command queue'),
  COMMAND_DLQ_NAME: z.string().endsWith('.fifo').default('wa-gateway-commands-dlq.fifo').describe('Dead-letter queue of the command queue'),
  WEBHOOK_QUEUE_NAME: z.string().default('wa-gateway-webhooks').describe('Webhook event queue'),
  WEBHOOK_DLQ_NAME: z
    .string()
    .default('wa-gateway-webhooks-dlq')
    .describe('Where given-up webhook events go when the queue has no redrive target'),
  /** When set (existing infrastructure, CDK outputs), used as is instead of resolving by name. */
  COMMAND_QUEUE_URL: optionalString.describe('Command queue URL, used as is instead of resolving the name (CDK outputs)'),
  WEBHOOK_QUEUE_URL: optionalString.describe('Webhook queue URL, used as is instead of resolving the name'),
  /** connector/commands/legacy-drain.ts: the owner of shard 0 moves its commands to the shard queues. */
  LEGACY_COMMAND_QUEUE_URL: optionalString.describe(
    'The single command queue of a deployment from before shards, drained into the shard queues; by default the queue named `COMMAND_QUEUE_NAME` when it exists (not looked for when `COMMAND_QUEUE_URL` is set)',
  ),
  /**
   * Scale-out (docs/design.md, Scale-out): accounts hash to COMMAND_SHARDS shards; each shard has
   * its own FIFO command queue and a lease that one connector holds. Changing it moves accounts
   * to other queues: drain the command queues first.
   */
  COMMAND_SHARDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(32)
    .describe(
      'Shards accounts hash to: each has its own FIFO command queue (`<COMMAND_QUEUE_NAME>-<n>.fifo`) and one owning connector; `1`: the single queue `COMMAND_QUEUE_NAME`',
    ),
  CONNECTORS: positiveInt(1).describe('`npm start` only: connector processes to run (`1`: the connector runs in the same process)'),
  LEASE_TTL_MS: positiveInt(20_000).describe(
    "How long a connector's heartbeat (which holds its shard and account leases) lasts without a beat: the takeover time after a connector dies",
  ),
  LEASE_RENEW_MS: positiveInt(5_000).describe(
    'How often a connector extends its heartbeat and rebalances shards (well under LEASE_TTL_MS)',
  ),
  OWNERSHIP_SCAN_MS: positiveInt(300_000).describe(
    'How often a connector lists every account to look for accounts of its shards that no connector runs (a safety net: a shard acquired resumes its accounts at once)',
  ),
  IDLE_COLLECT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(30_000)
    .describe(
      'Connector: how often it checks whether it is quiet with much garbage in its V8 heap, and then collects it (`0`: never; needs `--expose-gc`, which its start commands pass)',
    ),
  METRICS_PORT: optionalPort.describe(
    'Connector: serve Prometheus metrics on this port at `/metrics` (unset: no server; `0`: any free port)',
  ),
  METRICS_EMF: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true')
    .describe(
      '`true`: the connector also logs its metrics every minute as CloudWatch Embedded Metric Format lines (the CDK stack sets it)',
    ),
  SIGNAL_SESSIONS_PLAIN: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true')
    .describe(
      'Connector: `true`: Signal sessions are written plain, never deflated, by every connector (this one stops announcing that it reads them deflated): set for a day before rolling back below the version that deflates them (docs/deploy-aws.md, Rolling upgrades)',
    ),
  METRICS_EMF_DETAIL: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true')
    .describe(
      '`true`: the EMF line also holds the accounts owned and logged out, the commands, the RSS and the bounded caches summed up (six more CloudWatch custom metrics, $1.80 a month); unset: the accounts connected and reconnecting, the messages received and the decrypt failures (four, $1.20 a month)',
    ),
  METRICS_EMF_CACHES: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true')
    .describe(
      '`true`: the EMF lines also give each bounded cache its own metrics (two CloudWatch custom metrics per cache, $0.60 a month each cache); unset: the caches summed up in two metrics',
    ),
  /** Create the table, bucket and queues at start when absent (local stacks; off on AWS). */
  CREATE_RESOURCES: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true')
    .describe('`true`: create the table, bucket and queues at start when absent (`npm start` does unless `false`)'),

  /**
   * A send's deadline: the connector must take (claim) it within SEND_TIMEOUT_MS of the request,
   * or it is failed and never sent. A send taken in time gets SEND_SETTLE_MS more to report its
   * outcome. Keep the sum below the HTTP timeout in front of the API (API Gateway: 29 s).
   */
  SEND_TIMEOUT_MS: positiveInt(20_000).describe(
    "A send's deadline: the connector must start it within this time of the request, or it is failed and never sent",
  ),
  SEND_SETTLE_MS: positiveInt(5_000).describe(
    'How much longer the API waits for the outcome of a send the connector started in time (keep SEND_TIMEOUT_MS + this under the HTTP timeout in front of the API)',
  ),
  /**
   * Whether new accounts start with their sends paced (`settings.sendPolicy.enabled`,
   * docs/sending.md): on by default, since protecting the number is the point; `off` for a
   * deployment (or a suite, a benchmark) whose accounts should send at once unless asked.
   */
  SEND_PACING_DEFAULT: z
    .preprocess(emptyAsUndefined, z.enum(['on', 'off']).default('on'))
    .describe('`off`: new accounts start with `settings.sendPolicy.enabled: false` (their sends unpaced)'),
  /**
   * How long a send waits for WhatsApp's ack (docs/sending.md#whatsapps-refusals). WhatsApp acks a message
   * stanza within a round trip (tens to hundreds of ms; on the sandbox within 1 ms of
   * sendMessage resolving, bench:ack): 3 s is ten times a slow mobile round trip, so a missing
   * ack means a connection gone quiet, not a slow one, and it stays under SEND_SETTLE_MS, so the
   * API still hears the outcome of a send its connector took right at the deadline.
   */
  SEND_ACK_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(3_000)
    .describe(
      "How long a send waits for WhatsApp's ack before answering: a refusal (nack) answers 500, no ack within this time answers 200 as the stanza went out (`0`: answer without waiting)",
    ),
  /** The first pause after a 429 or 463 nack; tests shorten it (core/send-pause.ts). */
  SEND_PAUSE_MIN_MS: positiveInt(60_000).describe(
    "The first pause of an account's sending after WhatsApp refused a send with 429 or 463; each repeat doubles it, up to 24 h (tests shorten it)",
  ),
  /**
   * Retention (core/store/retention.ts): unset keeps everything forever. DynamoDB TTL and the
   * bucket's lifecycle rule delete on AWS (the CDK app sets both from its context); `npm start`
   * sweeps the embedded emulators itself; every read leaves expired rows out either way.
   */
  MESSAGE_RETENTION_DAYS: optionalPositiveInt.describe(
    'Days a message is kept after its time (its row, the status and receipts on it, its send record); a chat goes with its last message. Unset: kept forever',
  ),
  MEDIA_RETENTION_DAYS: optionalPositiveInt.describe(
    'Days a media file (received, or an upload left by a send that never settled) is kept after it was stored. Unset: kept forever',
  ),
  MAX_UPLOAD_BYTES: positiveInt(50 * 1024 * 1024).describe('Largest media upload (50 MB)'),

  /**
   * Webhook delivery: a POST gives up after WEBHOOK_TIMEOUT_MS; a failed delivery is retried
   * after WEBHOOK_RETRY_BASE_MS * 2^(attempt-1) (plus up to 25% jitter) until
   * WEBHOOK_MAX_ATTEMPTS attempts, then goes to the dead-letter queue. Defaults: 10 attempts,
   * waits of 30 s, 1, 2, 4, 8, 16, 32 min, 1 h 4 min, 2 h 8 min: at least 4 h 15 min before
   * giving up. Attempts are SQS receives, so the queue's redrive maxReceiveCount must be at
   * least WEBHOOK_MAX_ATTEMPTS (core/resources.ts and the CDK stack use 15).
   */
  WEBHOOK_TIMEOUT_MS: positiveInt(10_000).describe('Time limit of one webhook POST'),
  WEBHOOK_RETRY_BASE_MS: positiveInt(30_000).describe('First wait before a webhook retry; each later wait doubles (plus up to 25% jitter)'),
  WEBHOOK_MAX_ATTEMPTS: positiveInt(10).describe(
    "Attempts before the event goes to the webhook DLQ (at least 4 h 15 min with the defaults; keep it <= the queue's maxReceiveCount, 15)",
  ),
  /**
   * Straight delivery (connector/webhooks/straight-delivery.ts): the connector that stored an
   * event makes its first attempt at once and keeps the event held (docs/guarantees.md) until it
   * is served or its retry queued, at most this long; then a copy of the event is queued and the
   * hold let go, so a slow receiver holds no write-ahead record or outbox item longer.
   */
  WEBHOOK_STRAIGHT_WAIT_MS: positiveInt(1_000).describe(
    "Longest wait for an event's first attempt before a copy is queued for the retries and the event's hold goes",
  ),
  /**
   * Circuit per receiver URL (connector/webhooks/circuit.ts): after WEBHOOK_CIRCUIT_FAILURES
   * failed POSTs in a row the URL's events are parked (each still on its own retry schedule,
   * no POST) and one probe event tests the URL after WEBHOOK_PROBE_BASE_MS, doubling up to
   * WEBHOOK_PROBE_MAX_MS. Its first 2xx makes the parked events visible again at once, so a
   * receiver that came back gets its backlog within about WEBHOOK_PROBE_MAX_MS plus a few seconds.
   */
  WEBHOOK_CIRCUIT_FAILURES: positiveInt(5).describe(
    "Failed POSTs in a row that open a receiver URL's circuit (its events are parked, one probe tests it)",
  ),
  WEBHOOK_PROBE_BASE_MS: positiveInt(5_000).describe('Wait before the first probe of an open circuit; doubles after each failed probe'),
  WEBHOOK_PROBE_MAX_MS: positiveInt(30_000).describe(
    'Longest wait between probes: a receiver that came back gets its backlog within about this',
  ),
  /** Also post messages the account sent itself (from the phone or the API); default: received only. */
  WEBHOOK_INCLUDE_FROM_ME: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true')
    .describe('`true`: also post messages the account sent itself'),

  /**
   * Webhooks and account proxies may target loopback and private addresses (127/8, 10/8, 172.16/12, 192.168/16,
   * 100.64/10, ::1, fc00::/7): for receivers on the same machine or network. Default false.
   * Metadata, link-local, unspecified, multicast and broadcast addresses are refused always.
   */
  WEBHOOK_ALLOW_PRIVATE: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).optional())
    .transform((v) => v === 'true')
    .describe(
      '`true`: webhooks and account proxies may target loopback and private addresses (`npm start` sets it unless given; AWS: false)',
    ),

  /**
   * AWS event targets (docs/webhooks.md, AWS targets): the SQS queue and EventBridge bus ARNs a
   * registration's `url` may name, as comma-separated ARNs in which `*` stands for any run of
   * characters. Read by the API (registration) and the connector (every delivery); the CDK app
   * sets it from its `eventTargetArns` context option and grants exactly these.
   */
  EVENT_TARGET_ARNS: z
    .preprocess(emptyAsUndefined, z.string().optional())
    .transform((text, ctx) => {
      if (text === undefined) return [];
      const parsed = parseTargetPatterns(text);
      if (parsed.ok) return parsed.patterns;
      ctx.addIssue({
        code: 'custom',
        message: `not an SQS queue or EventBridge event bus ARN pattern: ${parsed.invalid.join(', ')} (e.g. arn:aws:sqs:eu-west-1:123456789012:orders-*)`,
      });
      return z.NEVER;
    })
    .describe(
      'The AWS targets webhooks may name instead of a URL: comma-separated SQS queue (`arn:aws:sqs:<region>:<account>:<queue>`) and EventBridge bus (`arn:aws:events:<region>:<account>:event-bus/<name>`) ARNs, `*` matching any run of characters; unset: none',
    ),

  /** Admin access keys; unset, the API is open (docs/api.md, access keys). */
  API_KEY: optionalString.describe('Admin access key(s), comma-separated so that one can be rotated; unset: no authentication'),
  API_KEY_SECRET_ARN: optionalString.describe('Lambda only: a Secrets Manager secret whose value is `API_KEY`, read at cold start'),

  /** Sandbox network (all three, or none for real WhatsApp). */
  WA_WS_URL: optionalString.describe("A sandbox network's WebSocket URL (the three `WA_*` settings: all or none)"),
  WA_ROOT_PUBLIC_KEY: z
    .preprocess(
      emptyAsUndefined,
      z
        .string()
        .regex(/^[0-9a-fA-F]{64}$/)
        .optional(),
    )
    .describe("The sandbox's root public key (64 hex chars)"),
  WA_MEDIA_CA_FILE: optionalString.describe("PEM file of the CA of the sandbox's HTTPS media host"),

  /**
   * The WhatsApp Web version sockets announce (connector/wa-version/): resolved at start and every
   * 6 h from WA_VERSION_URL (WhatsApp Web's `sw.js`), else the version Baileys publishes, else the
   * one pinned in the package; WA_VERSION pins it by hand. Against a sandbox nothing is fetched from
   * the internet: only the URLs given here are read.
   */
  WA_VERSION: z
    .preprocess(
      emptyAsUndefined,
      z
        .string()
        .regex(/^\d{1,4}\.\d{1,6}\.\d{1,12}$/, 'must look like 2.3000.1234567')
        .optional(),
    )
    .describe('Pins the WhatsApp Web version sockets announce (e.g. `2.3000.1234567`); unset: resolved at run time'),
  WA_VERSION_URL: optionalHttpUrl.describe(
    "Where the current WhatsApp Web version is read (a page carrying `client_revision`, as WhatsApp Web's `sw.js` does); unset: `https://web.whatsapp.com/sw.js`, or nothing against a sandbox (`npm start -- --sandbox` points it at the sandbox's)",
  ),
  WA_VERSION_PUBLISHED_URL: optionalHttpUrl.describe(
    'The fallback: a source file carrying `const version = [2, 3000, n]`, as the WhatsApp library the connector runs publishes its defaults; unset: that file on GitHub, or nothing against a sandbox',
  ),

  /**
   * `sandbox`: `npm start` runs the offline sandbox network in its own process and fills in the
   * three WA_* settings itself (same as `npm start -- --sandbox`). Only the local stack reads it.
   */
  WA_NETWORK: z
    .enum(['whatsapp', 'sandbox'])
    .default('whatsapp')
    .describe(
      '`sandbox`: `npm start` runs the sandbox network itself and points the connector at it (as `npm start -- --sandbox`); `whatsapp`: the three `WA_*` settings decide',
    ),

  /** Ports of the sandbox that `npm start -- --sandbox` runs (unset: 7700, 7701, 7702, or others when taken). */
  SANDBOX_PORT: optionalPort.describe(
    "With `WA_NETWORK=sandbox`: the sandbox's WebSocket port (unset: 7700, or any when taken; `0`: any free port)",
  ),
  SANDBOX_CONTROL_PORT: optionalPort.describe("With `WA_NETWORK=sandbox`: the sandbox's control API port (unset: 7701, or any when taken)"),
  SANDBOX_MEDIA_PORT: optionalPort.describe("With `WA_NETWORK=sandbox`: the sandbox's media host port (unset: 7702, or any when taken)"),
  SANDBOX_LOG_LEVEL: logLevel.default('warn').describe("With `WA_NETWORK=sandbox`: the sandbox's own log level"),
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
  return !(config.AWS_ENDPOINT_URL || config.AWS_ENDPOINT_URL_DYNAMODB || config.AWS_ENDPOINT_URL_SQS || config.AWS_ENDPOINT_URL_S3);
}
