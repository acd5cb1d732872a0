import { z } from '@hono/zod-openapi';
import { idempotencyHeaders } from './idempotency.js';
import { accountIdParam, errorBodySchema } from './validation.js';

/** The OpenAPI pieces every JSON send route shares (functions/messaging.ts, message-kinds.ts). */
const params = z.object({ accountId: accountIdParam });

const errorContent = { 'application/json': { schema: errorBodySchema } };

/** A send's error answers; `notFound` says what a 404 means on that route. */
export const sendErrors = (notFound = 'Account not found') => ({
  400: { description: 'Missing or invalid field', content: errorContent },
  404: { description: notFound, content: errorContent },
  409: { description: 'Idempotency-Key reused with a different request', content: errorContent },
  500: { description: 'internal_error: not connected, rejected or timed out', content: errorContent },
});

export const sentResponse = {
  description: 'Sent',
  content: { 'application/json': { schema: z.object({ ok: z.literal(true), messageId: z.string() }) } },
};

/** `{ok, message}`: a send that makes no new message (react, delete, edit). */
export const doneResponse = (description = 'Done') => ({
  description,
  content: { 'application/json': { schema: z.object({ ok: z.literal(true), message: z.string() }) } },
});

/** A JSON body on `/accounts/{accountId}/…`, with the Idempotency-Key header. */
export const jsonSendRequest = <T extends z.ZodType>(schema: T) => ({
  body: { required: true, content: { 'application/json': { schema } } },
  params,
  headers: idempotencyHeaders,
});
