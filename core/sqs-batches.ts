import {
  DeleteMessageBatchCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type BatchResultErrorEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { createBatcher, type Batcher } from './batcher.js';

/**
 * SQS sends and deletes of a standard queue, grouped into SendMessageBatch and
 * DeleteMessageBatch requests (up to 10 entries) by core/batcher.ts. Each caller still learns
 * the outcome of its own message: an entry SQS refuses rejects only its caller.
 */
interface OutgoingMessage {
  body: string;
  delaySeconds?: number;
}

/** SQS's entries per batch request. */
const SQS_BATCH_LIMIT = 10;
/**
 * A batch request may carry 256 KiB in all: a body above this share travels alone, so that
 * ten of the rest always fit.
 */
const MAX_BATCHED_BODY_BYTES = 24 * 1024;
const SEND_LINGER_MS = 5;
/** A delete follows a finished delivery: nobody waits on it, so it may wait longer for company. */
const DELETE_LINGER_MS = 10;
const REQUESTS_IN_FLIGHT = 4;

export interface QueueBatches {
  send(message: OutgoingMessage): Promise<void>;
  /** `lingerMs`: how long this delete may wait for company (DELETE_LINGER_MS by default). */
  delete(receiptHandle: string, lingerMs?: number): Promise<void>;
  /** Sends what is queued and waits for every request out (shutdown). */
  flush(): Promise<void>;
}

export function queueBatches(sqs: SQSClient, queueUrl: () => Promise<string>): QueueBatches {
  const sends: Batcher<OutgoingMessage, void> = createBatcher({
    maxBatch: SQS_BATCH_LIMIT,
    lingerMs: SEND_LINGER_MS,
    maxInFlight: REQUESTS_IN_FLIGHT,
    async send(messages) {
      const result = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: await queueUrl(),
          Entries: messages.map((m, index) => ({
            Id: String(index),
            MessageBody: m.body,
            ...(m.delaySeconds ? { DelaySeconds: m.delaySeconds } : {}),
          })),
        }),
      );
      return outcomesOf(messages.length, result.Failed);
    },
  });
  const deletes: Batcher<string, void> = createBatcher({
    maxBatch: SQS_BATCH_LIMIT,
    lingerMs: DELETE_LINGER_MS,
    maxInFlight: REQUESTS_IN_FLIGHT,
    async send(receiptHandles) {
      const result = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: await queueUrl(),
          Entries: receiptHandles.map((handle, index) => ({ Id: String(index), ReceiptHandle: handle })),
        }),
      );
      return outcomesOf(receiptHandles.length, result.Failed);
    },
  });

  return {
    async send(message) {
      if (Buffer.byteLength(message.body, 'utf8') <= MAX_BATCHED_BODY_BYTES) return sends.add(message);
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: await queueUrl(),
          MessageBody: message.body,
          ...(message.delaySeconds ? { DelaySeconds: message.delaySeconds } : {}),
        }),
      );
    },
    delete: (receiptHandle, lingerMs) => deletes.add(receiptHandle, lingerMs),
    async flush() {
      await Promise.all([sends.flush(), deletes.flush()]);
    },
  };
}

/** Entries are numbered by position; a failed one becomes an Error named after SQS's code. */
function outcomesOf(count: number, failed: BatchResultErrorEntry[] | undefined): Array<undefined | Error> {
  const outcomes: Array<undefined | Error> = Array.from({ length: count }, () => undefined);
  for (const failure of failed ?? []) {
    const error = new Error(failure.Message ?? `SQS refused the entry (${failure.Code ?? 'unknown'})`);
    error.name = failure.Code ?? 'BatchEntryFailed';
    outcomes[Number(failure.Id)] = error;
  }
  return outcomes;
}
