import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../core/logger.js';
import type { AppEnv } from './services.js';

/**
 * A child logger bound to the request's id (set by Hono's requestId() before this runs), and one
 * log line when the request completes: method, path, status, duration.
 */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async function requestLogMiddleware(c, next) {
    const started = performance.now();
    const log = logger.child({ requestId: c.get('requestId') });
    c.set('log', log);
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
