import { z } from '@hono/zod-openapi';
import { idempotencyHeaders } from './idempotency.js';
import { errorResponse, jsonContent, jsonResponse } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';

/** The OpenAPI pieces the send routes share (sends.ts, kinds.ts, media-sends.ts, sticker.ts). */
const params = z.object({ accountId: accountIdParam });

/** A send's 500: every way a send fails, and the Retry-After of a paused account's refusal. */
const sendFailed = (description: string) => ({
  ...errorResponse(description),
  headers: {
    'Retry-After': {
      description: "Sent with a send refused because the account's sending is paused: seconds until it may be tried again",
      schema: { type: 'integer' as const },
    },
  },
});
const SEND_FAILED =
  'internal_error: not connected, a paced send whose turn comes after its deadline (`detail` `send rate limit`, with `retryAfter` and `Retry-After`; nothing is queued), refused by WhatsApp (`detail` names its error, e.g. `WhatsApp refused the send: reachout_timelock (463)`), sending paused after such a refusal (`detail` `sending paused: <reason>`, with `retryAfter` and `Retry-After`), rejected or timed out';

/** With `Prefer: respond-async` on a paced account: the send is queued (docs/sending.md#paced-sends). */
const queuedResponse = jsonResponse(
  z.object({
    ok: z.literal(true),
    messageId: z.string(),
    status: z.literal('queued'),
    notBefore: z
      .number()
      .int()
      .openapi({ description: "Unix ms: the earliest time the account's limits allow it, its random gap not included" }),
  }),
  'Queued (`Prefer: respond-async`, paced account); `message.status` events follow',
);
const QUEUE_FULL = 'send queue full (async sends only): `sendPolicy.queueLimit` sends wait already';

/** A send's error answers (and the 202 of an async one); `notFound` says what a 404 means on that route. */
export const sendErrors = (notFound = 'Account not found') => ({
  202: queuedResponse,
  400: errorResponse('Missing or invalid field'),
  404: errorResponse(notFound),
  409: errorResponse('Idempotency-Key reused with a different request'),
  429: errorResponse(QUEUE_FULL),
  500: sendFailed(SEND_FAILED),
});

export const sentResponse = jsonResponse(z.object({ ok: z.literal(true), messageId: z.string() }), 'Sent');

/** A multipart send's error answers; `badRequest` says what a 400 means on that route. */
export const uploadSendErrors = (badRequest: string) => ({
  202: queuedResponse,
  400: errorResponse(badRequest),
  404: errorResponse('Account not found'),
  409: errorResponse('Idempotency-Key reused with a different request'),
  413: errorResponse('File too large (max 50 MB)'),
  429: errorResponse(QUEUE_FULL),
  500: sendFailed(SEND_FAILED),
});

/** A JSON body on `/accounts/{accountId}/…`, with the Idempotency-Key header. */
export const jsonSendRequest = <T extends z.ZodType>(schema: T) => ({
  body: { required: true, content: jsonContent(schema) },
  params,
  headers: idempotencyHeaders,
});

type FormField = { type: 'string'; format?: string; enum?: string[] };

/**
 * A multipart body on `/accounts/{accountId}/…`, with the Idempotency-Key header. A plain
 * OpenAPI schema, not zod: a zod form schema would make the validator buffer the whole body;
 * receiveUpload streams it instead.
 */
export const multipartSendRequest = (required: string[], properties: Record<string, FormField>) => ({
  params,
  headers: idempotencyHeaders,
  body: { content: { 'multipart/form-data': { schema: { type: 'object' as const, required, properties } } } },
});
