import { DeleteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import { ACCOUNT_OBJECTS_PREFIX } from '../../core/keys.js';
import type { Logger } from '../../core/logger.js';
import { deleteKeys, listObjects, mediaStoreOf } from '../../core/media-store.js';
import { keptSince } from '../../core/store/retention.js';
import { writeIfCondition } from '../../core/store/table.js';

/**
 * What DynamoDB TTL and the bucket's lifecycle rule do on AWS, done for the embedded emulators,
 * which expire nothing themselves (docs/configuration.md, Retention): every item whose
 * `expiresAt` has passed is deleted (the same items TTL deletes: send records, write-ahead
 * records and the rest, not only messages), and with MEDIA_RETENTION_DAYS every object under
 * `accounts/` stored longer ago. `npm start` runs it only on its own emulators: on AWS both are
 * AWS's work, at no request cost.
 */
export interface RetentionSweep {
  /** One pass, as at `nowMs` (default: now); what it deleted. */
  sweep(nowMs?: number): Promise<{ items: number; objects: number }>;
  stop(): Promise<void>;
}

/** Often enough that an expired row is gone within minutes (AWS's TTL takes up to two days). */
const SWEEP_INTERVAL_MS = 10 * 60_000;
const DELETES_AT_ONCE = 8;

export function startRetentionSweep(
  deps: { config: Config; clients: Pick<AwsClients, 'dynamo' | 's3'>; logger: Logger },
  intervalMs = SWEEP_INTERVAL_MS,
): RetentionSweep {
  const { config, clients, logger } = deps;
  const log = logger.child({ component: 'retention-sweep' });

  async function sweepItems(nowSeconds: number): Promise<number> {
    let deleted = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await clients.dynamo.send(
        new ScanCommand({
          TableName: config.TABLE_NAME,
          FilterExpression: 'expiresAt <= :now',
          ProjectionExpression: 'pk, sk',
          ExpressionAttributeValues: { ':now': nowSeconds },
          ExclusiveStartKey: startKey,
        }),
      );
      const keys = (page.Items ?? []).map((item) => ({ pk: item.pk, sk: item.sk }));
      for (let i = 0; i < keys.length; i += DELETES_AT_ONCE) {
        const applied = await Promise.all(
          keys.slice(i, i + DELETES_AT_ONCE).map((Key) =>
            // Conditional, as TTL's own deletes: an item rewritten since the scan (a new expiry) stays.
            writeIfCondition(
              clients.dynamo.send(
                new DeleteCommand({
                  TableName: config.TABLE_NAME,
                  Key,
                  ConditionExpression: 'expiresAt <= :now',
                  ExpressionAttributeValues: { ':now': nowSeconds },
                }),
              ),
            ),
          ),
        );
        deleted += applied.filter(Boolean).length;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return deleted;
  }

  async function sweepObjects(nowMs: number): Promise<number> {
    const since = keptSince(config.MEDIA_RETENTION_DAYS, nowMs);
    if (since === undefined) return 0;
    const store = mediaStoreOf(config, clients);
    const expired = (await listObjects(store, ACCOUNT_OBJECTS_PREFIX))
      .filter((object) => object.lastModified !== undefined && object.lastModified.getTime() < since)
      .map((object) => object.key);
    return deleteKeys(store, expired);
  }

  let running: Promise<{ items: number; objects: number }> | undefined;
  const sweep = (now = Date.now()) => {
    running ??= (async () => {
      const [items, objects] = await Promise.all([sweepItems(Math.floor(now / 1000)), sweepObjects(now)]);
      if (items + objects > 0) log.info({ items, objects }, 'expired items and objects deleted');
      return { items, objects };
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const pass = () => {
    sweep(Date.now()).catch((error: unknown) => log.warn({ err: error }, 'retention sweep failed; tried again at the next'));
  };
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  pass();

  return {
    sweep,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
