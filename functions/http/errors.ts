import type { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  AlreadyExistsError,
  ConflictError,
  NotFoundError,
  OperationFailedError,
  PayloadTooLargeError,
  SendPausedError,
  SendQueueFullError,
  ValidationError,
} from '../../core/errors.js';
import { retryAfterSeconds } from '../../core/send-pause.js';
import type { AppEnv } from './services.js';

/** The error body of docs/api.md: `{ok: false, error}`, plus `detail` for 500 `internal_error`. */
export interface ErrorBody {
  ok: false;
  error: string;
  detail?: string;
  /** Seconds until a refused send may be tried again (also the `Retry-After` header). */
  retryAfter?: number;
  requestId?: string;
}

/** A schema issue as the error body: 400, or the status the issue carries (validation.ts). */
export function validationFailure(c: Context<AppEnv>, issue: z.core.$ZodIssue | undefined): Response {
  const status = issue?.code === 'custom' && issue.params?.status === 404 ? 404 : 400;
  return c.json({ ok: false, error: issue?.message ?? 'Invalid request' } satisfies ErrorBody, status);
}

/** One place mapping every error to a status and body (installed as `app.onError`). */
export function handleError(error: Error, c: Context<AppEnv>): Response {
  const log = c.get('log');
  if (error instanceof ValidationError || error instanceof AlreadyExistsError) {
    return c.json({ ok: false, error: error.message } satisfies ErrorBody, 400);
  }
  if (error instanceof NotFoundError) {
    return c.json({ ok: false, error: error.message } satisfies ErrorBody, 404);
  }
  if (error instanceof ConflictError) {
    return c.json({ ok: false, error: error.message } satisfies ErrorBody, 409);
  }
  if (error instanceof PayloadTooLargeError) {
    return c.json({ ok: false, error: error.message } satisfies ErrorBody, 413);
  }
  if (error instanceof SendQueueFullError) {
    return c.json({ ok: false, error: error.message } satisfies ErrorBody, 429);
  }
  if (error instanceof SendPausedError) {
    log?.info({ detail: error.message }, 'send refused: sending paused');
    const retryAfter = retryAfterSeconds(error.until);
    c.header('Retry-After', String(retryAfter));
    return c.json({ ok: false, error: 'internal_error', detail: error.message, retryAfter } satisfies ErrorBody, 500);
  }
  if (error instanceof OperationFailedError) {
    log?.warn({ err: error }, 'operation failed');
    return c.json({ ok: false, error: 'internal_error', detail: error.message } satisfies ErrorBody, 500);
  }
  if (error instanceof HTTPException) return httpExceptionResponse(error, c);
  log?.error({ err: error }, 'unhandled error');
  const requestId = c.get('requestId');
  return c.json(
    {
      ok: false,
      error: 'internal_error',
      detail: 'unexpected server error; see the server log',
      ...(requestId ? { requestId } : {}),
    } satisfies ErrorBody,
    500,
  );
}

function httpExceptionResponse(error: HTTPException, c: Context<AppEnv>): Response {
  // Hono raises a 400 only from its body validators, and the routes validate JSON bodies only:
  // a body it could not read. Keep our body shape and wording.
  if (error.status === 400) {
    return c.json({ ok: false, error: 'Invalid JSON body' } satisfies ErrorBody, 400);
  }
  if (error.status === 415) {
    return c.json({ ok: false, error: 'Request body must be JSON (Content-Type: application/json)' } satisfies ErrorBody, 400);
  }
  const status = error.status as ContentfulStatusCode;
  return c.json({ ok: false, error: error.message || 'Request failed' } satisfies ErrorBody, status);
}
