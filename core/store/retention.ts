/**
 * Retention (docs/configuration.md, Retention): message rows and their chats expire
 * MESSAGE_RETENTION_DAYS after the message's time, media rows MEDIA_RETENTION_DAYS after they
 * were stored, through the table's TTL attribute `expiresAt` (epoch seconds). DynamoDB deletes
 * expired items lazily (often a day or two late), so every read of such rows leaves out the
 * expired ones itself: a list bounds its Query's sort key by the oldest time still kept and
 * filters on `expiresAt` (rows written under an earlier, shorter retention), a get checks the
 * item it read. Unset: nothing expires, and the reads are as before.
 */
export interface Retention {
  messageDays?: number | undefined;
  mediaDays?: number | undefined;
}

const DAY_MS = 86_400_000;

/** The TTL attribute of a row whose time is `timeMs`, kept `days` (none when unset). */
export function expiryAfter(timeMs: number, days: number | undefined): { expiresAt?: number } {
  return days === undefined ? {} : { expiresAt: Math.ceil((timeMs + days * DAY_MS) / 1000) };
}

/** The oldest time (Unix ms) still kept under `days` at `nowMs`; undefined when everything is kept. */
export function keptSince(days: number | undefined, nowMs = Date.now()): number | undefined {
  return days === undefined ? undefined : nowMs - days * DAY_MS;
}

/** True when an item read carries a TTL that has passed (DynamoDB may not have deleted it yet). */
export function isExpired(item: Record<string, unknown>, nowMs = Date.now()): boolean {
  return typeof item.expiresAt === 'number' && item.expiresAt * 1000 <= nowMs;
}

/** The FilterExpression that leaves expired items out of a Query, with its value. */
export function notExpiredFilter(nowMs = Date.now()): { FilterExpression: string; ExpressionAttributeValues: Record<string, number> } {
  return {
    FilterExpression: 'attribute_not_exists(expiresAt) OR expiresAt > :retentionNow',
    ExpressionAttributeValues: { ':retentionNow': Math.floor(nowMs / 1000) },
  };
}
