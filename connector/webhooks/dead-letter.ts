import { GetQueueAttributesCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '../../core/logger.js';
import { resolveQueueUrl, toQueueBody } from '../../core/queues.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';

export interface DeadLetterTarget {
  url: string;
  /** The queue's own redrive limit, when it has a redrive policy. */
  maxReceiveCount?: number;
}

/**
 * The webhook queue's dead-letter queue: the target of its redrive policy (as core/resources.ts
 * and the CDK stack create it), else the queue named WEBHOOK_DLQ_NAME. The worker moves an
 * event there itself after its last attempt; the redrive policy stays as the safety net for
 * an event that keeps crashing the worker.
 */
async function resolveDeadLetterTarget(sqs: SQSClient, queueUrl: string, fallbackName: string): Promise<DeadLetterTarget> {
  const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }));
  const policy = parseRedrivePolicy(attributes.Attributes?.RedrivePolicy);
  const name = policy?.deadLetterTargetArn.split(':').at(-1) || fallbackName;
  return {
    url: await resolveQueueUrl(sqs, name),
    ...(policy?.maxReceiveCount ? { maxReceiveCount: policy.maxReceiveCount } : {}),
  };
}

/**
 * The dead-letter target, resolved once (again after a failure). A queue whose redrive limit is
 * below `maxAttempts` is reported when resolved: SQS moves its events to the DLQ earlier.
 */
export function deadLetterTargetOnce(
  sqs: SQSClient,
  queueUrl: () => Promise<string>,
  fallbackName: string,
  maxAttempts: number,
  log: Logger,
): () => Promise<DeadLetterTarget> {
  let deadLetter: Promise<DeadLetterTarget> | undefined;
  return () => {
    deadLetter ??= (async () => {
      const target = await resolveDeadLetterTarget(sqs, await queueUrl(), fallbackName);
      if (target.maxReceiveCount !== undefined && target.maxReceiveCount < maxAttempts) {
        log.warn(
          { maxReceiveCount: target.maxReceiveCount, maxAttempts },
          'webhook queue redrive limit is below WEBHOOK_MAX_ATTEMPTS: SQS moves events to the DLQ earlier',
        );
      }
      return target;
    })().catch((error: unknown) => {
      deadLetter = undefined;
      throw error;
    });
    return deadLetter;
  };
}

function parseRedrivePolicy(text: string | undefined): { deadLetterTargetArn: string; maxReceiveCount?: number } | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
    if (typeof parsed.deadLetterTargetArn !== 'string') return undefined;
    const max = Number(parsed.maxReceiveCount);
    return { deadLetterTargetArn: parsed.deadLetterTargetArn, ...(Number.isFinite(max) && max > 0 ? { maxReceiveCount: max } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * Puts a given-up (event, webhook) pair in the DLQ: the event with `webhookId` set to that
 * webhook, so that SQS's "redrive to source" brings it back to that webhook only, and
 * attributes saying why. The caller deletes the event from the webhook queue afterwards; a
 * crash in between leaves a copy in both, which the stable X-Webhook-Id makes harmless.
 */
export async function sendToDeadLetter(
  sqs: SQSClient,
  target: DeadLetterTarget,
  event: WebhookEvent,
  failure: { webhookId: string; attempts: number; lastError: string },
): Promise<void> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: target.url,
      // Without `attempted`: a redrive is a fresh first attempt for that webhook, whose log says failed.
      MessageBody: toQueueBody({ ...event, webhookId: failure.webhookId, attempted: undefined }),
      MessageAttributes: {
        attempts: { DataType: 'Number', StringValue: String(failure.attempts) },
        webhookId: { DataType: 'String', StringValue: failure.webhookId },
        lastError: { DataType: 'String', StringValue: failure.lastError.slice(0, 256) || 'unknown' },
      },
    }),
  );
}
