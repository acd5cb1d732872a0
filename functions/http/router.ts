import { OpenAPIHono } from '@hono/zod-openapi';
import { validationFailure } from './errors.js';
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
