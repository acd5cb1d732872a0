import { createHash } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { OperationFailedError } from '../../core/errors.js';
import { getStream, type MediaStore } from '../../core/media-store.js';

/**
 * The Idempotency-Key header of the send routes: the same key on the same account within a day
 * answers what the first request answered and sends nothing again (send-wait.ts does the
 * claiming and the waiting). Here: the header's schema and the request's fingerprint.
 */
const IDEMPOTENCY_KEY_ERROR = 'Idempotency-Key must be 1 to 255 printable ASCII characters';
export const IDEMPOTENCY_CONFLICT_ERROR = 'Idempotency-Key reused with a different request';

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;

/** The send routes' headers: Idempotency-Key, and Prefer for an async send (async-sends.ts). */
export const idempotencyHeaders = z.object({
  prefer: z.string().optional().openapi({
    description:
      '`respond-async`: a paced account queues the send and answers 202 with `notBefore` at once (docs/sending.md); without it a paced send waits for its turn within the deadline',
    example: 'respond-async',
  }),
  'idempotency-key': z.string().regex(PRINTABLE_ASCII, { error: IDEMPOTENCY_KEY_ERROR }).optional().openapi({
    description:
      'Makes the send safe to retry: the same key on the same account within 24 h returns the first answer and sends nothing again.',
    example: 'order-4711-confirmation',
  }),
});

/** A send made under an Idempotency-Key. */
export interface IdempotentRequest {
  key: string;
  /** Identifies the request the key was first used with: another one under the key is a 409. */
  fingerprint: string;
}

type Fields = Record<string, string | boolean | undefined>;

/** Undefined without a key. `route` and the fields (absent ones ignored) make the fingerprint. */
export function idempotentRequest(key: string | undefined, route: string, fields: Fields): IdempotentRequest | undefined {
  if (key === undefined) return undefined;
  const present = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([route, present]))
    .digest('hex');
  return { key, fingerprint };
}

/**
 * SHA-256 of an uploaded file as stored, for the fingerprint of a media send: read back from the
 * store because the upload streams through without being held.
 */
export async function storedFileSha256(media: MediaStore, s3Key: string): Promise<string> {
  const object = await getStream(media, s3Key);
  if (!object) throw new OperationFailedError('uploaded file not found');
  const hash = createHash('sha256');
  for await (const chunk of object.body) hash.update(chunk as Uint8Array);
  return hash.digest('hex');
}
