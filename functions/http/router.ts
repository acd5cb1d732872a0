import { OpenAPIHono } from '@hono/zod-openapi';
import type { Hono, MiddlewareHandler } from 'hono';
import type { Table } from '../../core/store/table.js';
import { validationFailure } from './errors.js';
import { knownAccount } from './known-account.js';
import type { AppEnv } from './services.js';

/**
 * A sub-app whose validation failures become the error body of docs/api.md: the first issue's message
 * (the schemas carry the exact strings of docs/api.md), 400, or the status the issue carries
 * (404 for an id that cannot exist).
 */
export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) return validationFailure(c, result.error.issues[0]);
      return undefined;
    },
  });
}

/** Where a feature's routes answer an unknown account with 404 before anything else (knownAccount). */
export interface KnownAccountPaths {
  table: Table;
  /** Hono patterns, any method: a request matching one but no route is looked up too. */
  paths: string[];
  /** Middleware run after the look-up on the same paths (the send routes' 202, messages/async-sends.ts). */
  afterLookUp?: MiddlewareHandler<AppEnv>;
}

/**
 * A feature's one router: its parts, each at `/` (their routes carry full paths), behind the
 * account look-up on `knownAccountOn`, installed before the parts so that it runs first.
 */
export function featureRouter(parts: Hono<AppEnv>[], knownAccountOn?: KnownAccountPaths): OpenAPIHono<AppEnv> {
  const router = newRouter();
  if (knownAccountOn) {
    const lookUp = knownAccount(knownAccountOn.table);
    for (const path of knownAccountOn.paths) router.use(path, lookUp);
    const { afterLookUp } = knownAccountOn;
    if (afterLookUp) for (const path of knownAccountOn.paths) router.use(path, afterLookUp);
  }
  for (const part of parts) router.route('/', part);
  return router;
}
