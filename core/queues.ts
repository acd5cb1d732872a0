import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { AwsClients } from './aws.js';
import type { Config } from './config.js';
import { logger as rootLogger, type Logger } from './logger.js';
import { commandSchema, type Command } from './schemas/command.js';
import { shardOf, shardQueueName, shardQueueUrl } from './shards.js';
import { queueBatches } from './sqs-batches.js';
import { webhookEventSchema, type WebhookEvent } from './schemas/webhook-event.js';

/**
 * The queues: commands (FIFO, one queue per shard, core/shards.ts; one message group per
 * account, deduplicated by command id) and webhook events (standard; sends and acks grouped into batch requests, sqs-batches.ts,
 * each caller still awaiting its own message). Queue URLs come from the config when given, otherwise they are
 * resolved by name once and cached.
 */
export interface Received<T> {
  body: T;
  receiptHandle: string;
  /** 1 on first delivery; higher on redelivery after a visibility timeout. */
  receiveCount: number;
  sqsMessageId: string;
}

interface ReceiveOptions {
  maxMessages?: number;
  /** Long-poll seconds (0-20). */
  waitSeconds?: number;
  visibilityTimeoutSeconds?: number;
  abortSignal?: AbortSignal;
  /** Called for each wake-up received that says shards were handed to this queue's owner (`wakeReceivers`). */
  onShardsHanded?: () => void;
}

/** One shard's command queue; `sendCommand` routes by the command's account (its own shard). */
interface CommandQueue {
  sendCommand(command: Command): Promise<void>;
  receiveCommands(options?: ReceiveOptions): Promise<Received<Command>[]>;
  ackCommand(receiptHandle: string): Promise<void>;
  changeCommandVisibility(receiptHandle: string, seconds: number): Promise<void>;
  /** One visibility for many commands (batch requests of 10); answers the handles SQS refused. */
  changeCommandVisibilities(receiptHandles: string[], seconds: number): Promise<string[]>;
  /**
   * Queues a wake-up: a message no consumer runs (every receive deletes it unseen) whose only
   * effect is to end a long poll out on this queue at once (a stopping consumer's).
   * `shardsHanded`: it also tells the connector polling the queue that shards were just handed
   * to it, so that it takes them now rather than at its next balancing round.
   */
  wakeReceivers(note?: { shardsHanded?: boolean }): Promise<void>;
}

/** The top-level command methods are those of shard 0 (the only one with COMMAND_SHARDS=1). */
export interface Queues extends CommandQueue {
  /** The command queue of one shard, for the connector that owns it. */
  commandQueue(shard: number): CommandQueue;
  /**
   * With several shards, the single queue of a deployment from before shards
   * (LEGACY_COMMAND_QUEUE_URL, or the queue named COMMAND_QUEUE_NAME itself), which may not
   * exist: its commands are forwarded to their shards (connector/commands/legacy-drain.ts).
   * Undefined with one shard (it is shard 0's queue) and with COMMAND_QUEUE_URL but no
   * LEGACY_COMMAND_QUEUE_URL.
   */
  legacyCommandQueue(): CommandQueue | undefined;
  sendWebhookEvent(event: WebhookEvent, delaySeconds?: number): Promise<void>;
  receiveWebhookEvents(options?: ReceiveOptions): Promise<Received<WebhookEvent>[]>;
  /**
   * A wake-up on the webhook queue (as `wakeReceivers`). The queue is shared by every
   * connector, so another one's receive may take it instead of the stopping one's.
   */
  wakeWebhookReceivers(): Promise<void>;
  /**
   * Deletes a handled event. `lingerMs`: how long the delete may wait for others to share its
   * request (a few ms by default; the delivery worker, which does not wait for it, longer).
   */
  ackWebhookEvent(receiptHandle: string, lingerMs?: number): Promise<void>;
  changeWebhookVisibility(receiptHandle: string, seconds: number): Promise<void>;
  changeWebhookVisibilities(receiptHandles: string[], seconds: number): Promise<string[]>;
  commandQueueUrl(): Promise<string>;
  webhookQueueUrl(): Promise<string>;
  /** Sends the webhook sends and acks still waiting for company in a batch; resolves when all are done. */
  flush(): Promise<void>;
}

export async function resolveQueueUrl(sqs: SQSClient, name: string): Promise<string> {
  const result = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  if (!result.QueueUrl) throw new Error(`Queue ${name} has no URL`);
  return result.QueueUrl;
}

function cachedUrl(sqs: SQSClient, given: string | undefined, name: string): () => Promise<string> {
  let url: Promise<string> | undefined = given ? Promise.resolve(given) : undefined;
  return () => {
    url ??= resolveQueueUrl(sqs, name).catch((error: unknown) => {
      url = undefined;
      throw error;
    });
    return url;
  };
}

export function createQueues(config: Config, clients: Pick<AwsClients, 'sqs'>, log: Logger = rootLogger): Queues {
  const { sqs } = clients;
  const shardCount = config.COMMAND_SHARDS;
  const shardUrls = new Map<number, () => Promise<string>>();
  const commandQueueUrlOf = (shard: number) => {
    let url = shardUrls.get(shard);
    if (!url) {
      const given = config.COMMAND_QUEUE_URL ? shardQueueUrl(config.COMMAND_QUEUE_URL, shard, shardCount) : undefined;
      url = cachedUrl(sqs, given, shardQueueName(config.COMMAND_QUEUE_NAME, shard, shardCount));
      shardUrls.set(shard, url);
    }
    return url();
  };
  const commandQueueUrl = () => commandQueueUrlOf(0);
  const webhookQueueUrl = cachedUrl(sqs, config.WEBHOOK_QUEUE_URL, config.WEBHOOK_QUEUE_NAME);
  const webhookBatches = queueBatches(sqs, webhookQueueUrl);

  async function receive<S extends z.ZodType>(queueUrl: string, schema: S, options: ReceiveOptions): Promise<Received<z.infer<S>>[]> {
    const result = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: options.maxMessages ?? 10,
        WaitTimeSeconds: options.waitSeconds ?? 20,
        ...(options.visibilityTimeoutSeconds !== undefined ? { VisibilityTimeout: options.visibilityTimeoutSeconds } : {}),
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
      { abortSignal: options.abortSignal },
    );
    const received: Received<z.infer<S>>[] = [];
    for (const message of result.Messages ?? []) {
      if (!message.ReceiptHandle || !message.MessageId) continue;
      const parsed = safeJson(message.Body);
      if (isWakeUp(parsed)) {
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
        if ((parsed as { shardsHanded?: unknown }).shardsHanded === true) options.onShardsHanded?.();
        continue;
      }
      const body = schema.safeParse(parsed);
      if (!body.success) {
        // A malformed message can never succeed; dropping it keeps its FIFO group moving.
        log.error({ sqsMessageId: message.MessageId, issues: body.error.issues }, 'dropping malformed queue message');
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
        continue;
      }
      received.push({
        body: body.data,
        receiptHandle: message.ReceiptHandle,
        receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? '1'),
        sqsMessageId: message.MessageId,
      });
    }
    return received;
  }

  const ack = async (queueUrl: Promise<string>, receiptHandle: string) => {
    await sqs.send(new DeleteMessageCommand({ QueueUrl: await queueUrl, ReceiptHandle: receiptHandle }));
  };
  const changeVisibility = async (queueUrl: Promise<string>, receiptHandle: string, seconds: number) => {
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: await queueUrl,
        ReceiptHandle: receiptHandle,
        // fauxqs 2.4.1 with persistence loses a message made visible with 0 (its SQLite update
        // writes NULL into a NOT NULL receive count after the message left the in-flight set);
        // one second is as good as zero for a retry.
        VisibilityTimeout: Math.max(1, seconds),
      }),
    );
  };
  const changeVisibilities = async (queueUrl: Promise<string>, receiptHandles: string[], seconds: number) => {
    const refused: string[] = [];
    for (let start = 0; start < receiptHandles.length; start += 10) {
      const chunk = receiptHandles.slice(start, start + 10);
      const result = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: await queueUrl,
          Entries: chunk.map((handle, index) => ({ Id: String(index), ReceiptHandle: handle, VisibilityTimeout: Math.max(1, seconds) })),
        }),
      );
      for (const failure of result.Failed ?? []) {
        const handle = chunk[Number(failure.Id)];
        if (handle !== undefined) refused.push(handle);
      }
    }
    return refused;
  };

  async function sendCommand(command: Command): Promise<void> {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: await commandQueueUrlOf(shardOf(command.accountId, shardCount)),
        MessageBody: toQueueBody(commandSchema.parse(command)),
        MessageGroupId: command.accountId,
        MessageDeduplicationId: command.commandId,
      }),
    );
  }
  const commandQueueAt = (url: () => Promise<string>): CommandQueue => ({
    sendCommand,
    receiveCommands: async (options = {}) => receive(await url(), commandSchema, options),
    ackCommand: (receiptHandle) => ack(url(), receiptHandle),
    changeCommandVisibility: (receiptHandle, seconds) => changeVisibility(url(), receiptHandle, seconds),
    changeCommandVisibilities: (receiptHandles, seconds) => changeVisibilities(url(), receiptHandles, seconds),
    async wakeReceivers(note = {}) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: await url(),
          MessageBody: JSON.stringify(note.shardsHanded ? { ...WAKE_UP, shardsHanded: true } : WAKE_UP),
          MessageGroupId: WAKE_UP_GROUP,
          MessageDeduplicationId: randomUUID(),
        }),
      );
    },
  });
  const commandQueues = new Map<number, CommandQueue>();
  const commandQueue = (shard: number): CommandQueue => {
    let queue = commandQueues.get(shard);
    if (!queue) {
      queue = commandQueueAt(() => commandQueueUrlOf(shard));
      commandQueues.set(shard, queue);
    }
    return queue;
  };
  // Given queue URLs (CDK) name no single queue unless LEGACY_COMMAND_QUEUE_URL does; by name it
  // is COMMAND_QUEUE_NAME itself, which may not exist.
  const legacyUrl = config.LEGACY_COMMAND_QUEUE_URL ?? (config.COMMAND_QUEUE_URL ? undefined : config.COMMAND_QUEUE_NAME);
  const legacy =
    shardCount > 1 && legacyUrl ? commandQueueAt(cachedUrl(sqs, config.LEGACY_COMMAND_QUEUE_URL, config.COMMAND_QUEUE_NAME)) : undefined;

  return {
    ...commandQueue(0),
    commandQueue,
    legacyCommandQueue: () => legacy,
    commandQueueUrl,
    webhookQueueUrl,
    async sendWebhookEvent(event, delaySeconds) {
      await webhookBatches.send({ body: toQueueBody(webhookEventSchema.parse(event)), ...(delaySeconds ? { delaySeconds } : {}) });
    },
    async receiveWebhookEvents(options = {}) {
      return receive(await webhookQueueUrl(), webhookEventSchema, options);
    },
    async wakeWebhookReceivers() {
      await sqs.send(new SendMessageCommand({ QueueUrl: await webhookQueueUrl(), MessageBody: JSON.stringify(WAKE_UP) }));
    },
    ackWebhookEvent: (receiptHandle, lingerMs) => webhookBatches.delete(receiptHandle, lingerMs),
    changeWebhookVisibility: (receiptHandle, seconds) => changeVisibility(webhookQueueUrl(), receiptHandle, seconds),
    changeWebhookVisibilities: (receiptHandles, seconds) => changeVisibilities(webhookQueueUrl(), receiptHandles, seconds),
    flush: () => webhookBatches.flush(),
  };
}

/**
 * JSON for an SQS body with every character outside the Basic Multilingual Plane (emoji)
 * written as a `\uD83D\uDC4B` escape pair: JSON.parse restores it unchanged, and fauxqs 2.4.1
 * rejects raw astral characters (its body check tests UTF-16 code units, so surrogates fail
 * with InvalidMessageContents) although real SQS accepts them.
 */
export function toQueueBody(value: unknown): string {
  return withAstralEscaped(JSON.stringify(value));
}

/** JSON text with its characters outside the Basic Multilingual Plane escaped (as toQueueBody). */
export function withAstralEscaped(json: string): string {
  return json.replace(/[\u{10000}-\u{10FFFF}]/gu, (char) =>
    char
      .split('')
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
  );
}

/**
 * The body of a wake-up (`wakeReceivers`). Its FIFO group is one no account can have (account
 * ids are letters and digits), so it never waits behind an account's commands. A connector from
 * before wake-ups drops one as a malformed message (logged once per stopping consumer); one from
 * before `shardsHanded` deletes it unseen, and takes its shards at its next round as it always did.
 */
const WAKE_UP = { wakeUp: true } as const;
const WAKE_UP_GROUP = '#wake-up';

function isWakeUp(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { wakeUp?: unknown }).wakeUp === true;
}

function safeJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
}
