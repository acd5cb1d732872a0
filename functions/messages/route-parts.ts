import { z } from '@hono/zod-openapi';
import { idempotencyHeaders } from './idempotency.js';
import { errorResponse, jsonContent, jsonResponse } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';

/** The OpenAPI pieces the send routes share (sends.ts, kinds.ts, media-sends.ts, sticker.ts). */
const params = z.object({ accountId: accountIdParam });

/** A send's error answers; `notFound` says what a 404 means on that route. */
export const sendErrors = (notFound = 'Account not found') => ({
  400: errorResponse('Missing or invalid field'),
  404: errorResponse(notFound),
  409: errorResponse('Idempotency-Key reused with a different request'),
  500: errorResponse('internal_error: not connected, rejected or timed out'),
});

export const sentResponse = jsonResponse(z.object({ ok: z.literal(true), messageId: z.string() }), 'Sent');

/** A multipart send's error answers; `badRequest` says what a 400 means on that route. */
export const uploadSendErrors = (badRequest: string) => ({
  400: errorResponse(badRequest),
  404: errorResponse('Account not found'),
  409: errorResponse('Idempotency-Key reused with a different request'),
  413: errorResponse('File too large (max 50 MB)'),
  500: errorResponse('internal_error'),
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
