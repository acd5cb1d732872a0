import { TARGET_NOT_ALLOWED, isArn, parseAwsTarget, targetAllowed } from '../../../core/aws-targets.js';
import type { AwsClients } from '../../../core/aws.js';
import type { Config } from '../../../core/config.js';
import { postWebhook, urlForLogs, type PostOutcome } from '../post.js';
import { eventBridgeSender } from './eventbridge.js';
import { sqsSender } from './sqs.js';
import type { TargetMessage } from './target-message.js';

export interface TargetSenders {
  /**
   * Delivers one event to a registration's target by its protocol: an http(s) URL is POSTed
   * (post.ts), an SQS queue ARN gets a message (sqs.ts), an event bus ARN an event (eventbridge.ts).
   * Each answers the same outcome, so retries, circuits, the deliveries log, replay and the
   * dead-letter queue treat every target alike. Never throws.
   */
  send(url: string, message: TargetMessage & { secret?: string | undefined }): Promise<PostOutcome>;
  /** Closes the clients made for AWS targets (stop). */
  destroy(): void;
}

/**
 * An ARN is checked against EVENT_TARGET_ARNS again at every delivery, as a URL against the
 * address policy: a target removed from the setting since its registration fails permanently
 * (dead-lettered at once, never sent).
 */
export function createTargetSenders(config: Config, clients: Pick<AwsClients, 'sqs'>): TargetSenders {
  const timeoutMs = config.WEBHOOK_TIMEOUT_MS;
  const sqs = sqsSender(config, clients.sqs, timeoutMs);
  const eventBridge = eventBridgeSender(config, timeoutMs);
  return {
    async send(url, message) {
      if (!isArn(url)) {
        const { eventId, event, attempt, secret } = message;
        return postWebhook(url, message.rawBody, { eventId, event, attempt, secret }, timeoutMs, {
          allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
        });
      }
      const target = parseAwsTarget(url);
      if (!target) return { ok: false, reason: 'not an SQS queue or EventBridge event bus ARN', permanent: true };
      if (!targetAllowed(url, config.EVENT_TARGET_ARNS)) {
        return { ok: false, reason: `${TARGET_NOT_ALLOWED} (not in EVENT_TARGET_ARNS)`, permanent: true };
      }
      return target.service === 'sqs' ? sqs.send(target, message) : eventBridge.send(target, message);
    },
    destroy() {
      sqs.destroy();
      eventBridge.destroy();
    },
  };
}

/** A target as logs name it: an ARN whole, a URL by its origin only (its path or query may hold a token). */
export function targetForLogs(url: string): string {
  return isArn(url) ? url : urlForLogs(url);
}
