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
  'internal_error: not connected, refused by WhatsApp (`detail` names its error, e.g. `WhatsApp refused the send: reachout_timelock (463)`), sending paused after such a refusal (`detail` `sending paused: <reason>`, with `retryAfter` and `Retry-After`), rejected or timed out';

/** A send's error answers; `notFound` says what a 404 means on that route. */
export const sendErrors = (notFound = 'Account not found') => ({
  400: errorResponse('Missing or invalid field'),
  404: errorResponse(notFound),
  409: errorResponse('Idempotency-Key reused with a different request'),
  500: sendFailed(SEND_FAILED),
});

export const sentResponse = jsonResponse(z.object({ ok: z.literal(true), messageId: z.string() }), 'Sent');

/** A multipart send's error answers; `badRequest` says what a 400 means on that route. */
export const uploadSendErrors = (badRequest: string) => ({
  400: errorResponse(badRequest),
  404: errorResponse('Account not found'),
  409: errorResponse('Idempotency-Key reused with a different request'),
  413: errorResponse('File too large (max 50 MB)'),
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
