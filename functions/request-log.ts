import type { MiddlewareHandler } from 'hono';
import { newRequestId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { AppEnv } from './services.js';

const REQUEST_ID = /^[A-Za-z0-9-]{8,64}$/;

/**
 * Gives each request an id (the caller's X-Request-Id when well formed), a child logger bound to
 * it, and one log line when it completes: method, path, status, duration.
 */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async function requestLogMiddleware(c, next) {
    const started = performance.now();
    const given = c.req.header('x-request-id');
    const requestId = given && REQUEST_ID.test(given) ? given : newRequestId();
    const log = logger.child({ requestId });
    c.set('requestId', requestId);
    c.set('log', log);
    // Set before the handler builds its response: a header added to a finished response makes
    // Hono rebuild it around a body stream, which the Node server then copies chunk by chunk.
    c.header('X-Request-Id', requestId);
    await next();
    log.info(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
      },
      'request',
    );
  };
}
