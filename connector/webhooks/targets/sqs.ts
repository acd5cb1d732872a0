import { createHash } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { sqsQueueUrl, type SqsTarget } from '../../../core/aws-targets.js';
import { commonOf } from '../../../core/aws.js';
import type { Config } from '../../../core/config.js';
import { resolveQueueUrl, withAstralEscaped } from '../../../core/queues.js';
import type { PostOutcome } from '../post.js';
import { sdkFailureReason, type TargetMessage } from './target-message.js';

/** SQS's limit on a FIFO message's deduplication id. */
const MAX_DEDUPLICATION_ID_LENGTH = 128;

export interface SqsSender {
  send(target: SqsTarget, message: TargetMessage): Promise<PostOutcome>;
  /** Closes the clients made for queues of other regions. */
  destroy(): void;
}

/**
 * Delivers an event to an SQS queue (docs/webhooks.md, AWS targets): the body is the message
 * body, and the attributes `webhook-id`, `webhook-event` and `webhook-attempt` carry what the
 * X-Webhook-* headers carry. A FIFO queue gets the account as its message group (one account's
 * events in order for a consumer) and the event id as its deduplication id (SQS drops a retry or
 * a replay within its 5-minute deduplication window).
 *
 * Where the queue is: on AWS, the URL its ARN gives, through the connector's SQS client, or a
 * client of the queue's region when that is another one (a request is signed for one region).
 * Against an emulator or LocalStack (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL, or the embedded SQS
 * of `npm start`), the queue of that name on it, whatever region and account the ARN says:
 * resolved once by GetQueueUrl and kept until SQS says it no longer exists.
 */
export function sqsSender(config: Config, sqs: SQSClient, timeoutMs: number): SqsSender {
  const local = (config.AWS_ENDPOINT_URL_SQS ?? config.AWS_ENDPOINT_URL) !== undefined;
  const localUrls = new Map<string, Promise<string>>();
  const regionalClients = new Map<string, SQSClient>();

  function clientFor(region: string): SQSClient {
    if (local || region === config.AWS_REGION) return sqs;
    let client = regionalClients.get(region);
    if (!client) {
      client = new SQSClient({ ...commonOf(config, region), md5: false });
      regionalClients.set(region, client);
    }
    return client;
  }

  function queueUrlOf(target: SqsTarget): Promise<string> {
    if (!local) return Promise.resolve(sqsQueueUrl(target));
    const name = target.queueName;
    let url = localUrls.get(name);
    if (!url) {
      const resolving = resolveQueueUrl(sqs, name);
      resolving.catch(() => {
        if (localUrls.get(name) === resolving) localUrls.delete(name);
      });
      localUrls.set(name, resolving);
      url = resolving;
    }
    return url;
  }

  return {
    async send(target, message) {
      const abortSignal = AbortSignal.timeout(timeoutMs);
      try {
        const result = await clientFor(target.region).send(
          new SendMessageCommand({
            QueueUrl: await queueUrlOf(target),
            // The same JSON value; fauxqs refuses raw emoji (core/queues.ts, toQueueBody).
            MessageBody: withAstralEscaped(message.rawBody),
            MessageAttributes: {
              'webhook-id': { DataType: 'String', StringValue: message.eventId },
              'webhook-event': { DataType: 'String', StringValue: message.event },
              'webhook-attempt': { DataType: 'Number', StringValue: String(message.attempt) },
            },
            ...(target.fifo ? { MessageGroupId: message.accountId, MessageDeduplicationId: deduplicationId(message.eventId) } : {}),
          }),
          { abortSignal },
        );
        return { ok: true, status: result.$metadata.httpStatusCode ?? 200 };
      } catch (error) {
        // A queue deleted (and perhaps made again) since it was resolved: resolve it again next time.
        if (error instanceof Error && error.name === 'QueueDoesNotExist') localUrls.delete(target.queueName);
        return { ok: false, reason: sdkFailureReason(error, timeoutMs) };
      }
    },
    destroy() {
      for (const client of regionalClients.values()) client.destroy();
      regionalClients.clear();
    },
  };
}

/** The event id, or its SHA-256 when longer than SQS allows (account and message ids can make it so). */
function deduplicationId(eventId: string): string {
  return eventId.length <= MAX_DEDUPLICATION_ID_LENGTH ? eventId : createHash('sha256').update(eventId).digest('hex');
}
