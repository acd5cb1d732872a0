import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { EventBusTarget } from '../../../core/aws-targets.js';
import { commonOf } from '../../../core/aws.js';
import type { Config } from '../../../core/config.js';
import type { PostOutcome } from '../post.js';
import { sdkFailureReason, type TargetMessage } from './target-message.js';

/** The `source` of every event the gateway puts on a bus: what a rule matches it by. */
const EVENT_SOURCE = 'wa-gateway';

export interface EventBridgeSender {
  send(target: EventBusTarget, message: TargetMessage): Promise<PostOutcome>;
  destroy(): void;
}

/** The SDK module, loaded with the first event for a bus: a connector with no bus target never loads it. */
let sdkModule: Promise<typeof import('@aws-sdk/client-eventbridge')> | undefined;
const loadSdk = () => (sdkModule ??= import('@aws-sdk/client-eventbridge'));

/**
 * Delivers an event to an EventBridge event bus (docs/webhooks.md, AWS targets): one PutEvents
 * entry, source `wa-gateway`, detail-type the event's name, detail the JSON body, the bus named by
 * its ARN. A request that succeeds with a failed entry (FailedEntryCount > 0: throttled, internal
 * failure, access denied) is a failure whose reason is the entry's error code, retried like any
 * other. One client per region of the buses (a request is signed for one region), all on
 * AWS_ENDPOINT_URL_EVENTBRIDGE (or AWS_ENDPOINT_URL) when set.
 */
export function eventBridgeSender(config: Config, timeoutMs: number): EventBridgeSender {
  const endpoint = config.AWS_ENDPOINT_URL_EVENTBRIDGE ?? config.AWS_ENDPOINT_URL;
  const clients = new Map<string, EventBridgeClient>();

  async function clientFor(region: string): Promise<EventBridgeClient> {
    const { EventBridgeClient } = await loadSdk();
    let client = clients.get(region);
    if (!client) {
      client = new EventBridgeClient({ ...commonOf(config, region), ...(endpoint ? { endpoint } : {}) });
      clients.set(region, client);
    }
    return client;
  }

  return {
    async send(target, message) {
      const abortSignal = AbortSignal.timeout(timeoutMs);
      try {
        const client = await clientFor(target.region);
        const { PutEventsCommand } = await loadSdk();
        const result = await client.send(
          new PutEventsCommand({
            Entries: [{ Source: EVENT_SOURCE, DetailType: message.event, Detail: message.rawBody, EventBusName: target.arn }],
          }),
          { abortSignal },
        );
        if ((result.FailedEntryCount ?? 0) > 0) {
          const [entry] = result.Entries ?? [];
          return { ok: false, reason: entry?.ErrorCode ?? 'PutEvents entry failed' };
        }
        return { ok: true, status: result.$metadata.httpStatusCode ?? 200 };
      } catch (error) {
        return { ok: false, reason: sdkFailureReason(error, timeoutMs) };
      }
    },
    destroy() {
      for (const client of clients.values()) client.destroy();
      clients.clear();
    },
  };
}
