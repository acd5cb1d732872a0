import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  AlreadyExistsError,
  ConflictError,
  NotFoundError,
  OperationFailedError,
  PayloadTooLargeError,
  ValidationError,
} from '../core/errors.js';
import type { AppEnv } from './services.js';

/** The spec's error body: `{ok: false, error}`, plus `detail` for 500 `internal_error`. */
export interface ErrorBody {
  ok: false;
  error: string;
  detail?: string;
  requestId?: string;
}

/** Validation messages that mean "no such resource": an id that cannot exist is not found. */
const NOT_FOUND_MESSAGES = new Set(['Account not found', 'Message not found']);

export function validationFailure(c: Context<AppEnv>, message: string): Response {
  const status = NOT_FOUND_MESSAGES.has(message) ? 404 : 400;
  return c.json({ ok: false, error: message } satisfies ErrorBody, status);
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
  if (error instanceof OperationFailedError) {
    log?.warn({ err: { name: error.name, message: error.message } }, 'operation failed');
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
  // Hono's validators raise these for bodies they cannot read; keep our body shape and 400.
  if (error.status === 400 && /json/i.test(error.message)) {
    return c.json({ ok: false, error: 'Invalid JSON body' } satisfies ErrorBody, 400);
  }
  if (error.status === 415) {
    return c.json({ ok: false, error: 'Request body must be JSON (Content-Type: application/json)' } satisfies ErrorBody, 400);
  }
  const status = error.status as ContentfulStatusCode;
  return c.json({ ok: false, error: error.message || 'Request failed' } satisfies ErrorBody, status);
}
