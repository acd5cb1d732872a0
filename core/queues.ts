import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { z } from 'zod';
import type { AwsClients } from './aws.js';
import type { Config } from './config.js';
import { logger as rootLogger, type Logger } from './logger.js';
import { commandSchema, type Command } from './schemas/command.js';
import { queueBatches } from './sqs-batches.js';
import { webhookEventSchema, type WebhookEvent } from './schemas/webhook-event.js';

/**
 * The two queues: commands (FIFO, one message group per account, deduplicated by command id)
 * and webhook events (standard; sends and acks grouped into batch requests, sqs-batches.ts,
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
}

export interface Queues {
  sendCommand(command: Command): Promise<void>;
  receiveCommands(options?: ReceiveOptions): Promise<Received<Command>[]>;
  ackCommand(receiptHandle: string): Promise<void>;
  changeCommandVisibility(receiptHandle: string, seconds: number): Promise<void>;
  /** One visibility for many commands (batch requests of 10); answers the handles SQS refused. */
  changeCommandVisibilities(receiptHandles: string[], seconds: number): Promise<string[]>;
  sendWebhookEvent(event: WebhookEvent, delaySeconds?: number): Promise<void>;
  receiveWebhookEvents(options?: ReceiveOptions): Promise<Received<WebhookEvent>[]>;
  ackWebhookEvent(receiptHandle: string): Promise<void>;
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
  const commandQueueUrl = cachedUrl(sqs, config.COMMAND_QUEUE_URL, config.COMMAND_QUEUE_NAME);
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

  return {
    commandQueueUrl,
    webhookQueueUrl,
    async sendCommand(command) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: await commandQueueUrl(),
          MessageBody: toQueueBody(commandSchema.parse(command)),
          MessageGroupId: command.accountId,
          MessageDeduplicationId: command.commandId,
        }),
      );
    },
    async receiveCommands(options = {}) {
      return receive(await commandQueueUrl(), commandSchema, options);
    },
    ackCommand: (receiptHandle) => ack(commandQueueUrl(), receiptHandle),
    changeCommandVisibility: (receiptHandle, seconds) => changeVisibility(commandQueueUrl(), receiptHandle, seconds),
    changeCommandVisibilities: (receiptHandles, seconds) => changeVisibilities(commandQueueUrl(), receiptHandles, seconds),
    async sendWebhookEvent(event, delaySeconds) {
      await webhookBatches.send({ body: toQueueBody(webhookEventSchema.parse(event)), ...(delaySeconds ? { delaySeconds } : {}) });
    },
    async receiveWebhookEvents(options = {}) {
      return receive(await webhookQueueUrl(), webhookEventSchema, options);
    },
    ackWebhookEvent: (receiptHandle) => webhookBatches.delete(receiptHandle),
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
  return JSON.stringify(value).replace(/[\u{10000}-\u{10FFFF}]/gu, (char) =>
    char
      .split('')
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
  );
}

function safeJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
}
