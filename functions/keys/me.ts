import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { jsonResponse } from '../http/responses.js';
import { newRouter } from '../http/router.js';
import type { AppEnv } from '../http/services.js';

const callerView = z
  .object({
    ok: z.literal(true),
    role: z.enum(['admin', 'account', 'open']).openapi({
      description:
        "`admin`: a key of `API_KEY`, every route; `account`: an account key, its own account's routes; `open`: `API_KEY` is unset, every route without a key",
      example: 'account',
    }),
    accountId: z
      .string()
      .optional()
      .openapi({ description: 'The account an account key reaches; only with role `account`', example: 'sales1' }),
  })
  .openapi('Caller');

const me = createRoute({
  method: 'get',
  path: '/me',
  summary: "What the caller's key reaches",
  description:
    "Any valid key, an account key included, or none when `API_KEY` is unset. A client handed a key opens that key's own account from it, without asking which.",
  responses: {
    200: jsonResponse(callerView, 'The caller'),
  },
});

/** `GET /me`: the caller that authenticate (http/auth.ts) found, as it found it. */
export function meRoutes(): OpenAPIHono<AppEnv> {
  return newRouter().openapi(me, (c) => {
    const caller = c.get('caller');
    // authenticate sets the caller on every path that is not public, and /me is not.
    if (!caller) throw new Error('GET /me reached without a caller: authenticate did not run');
    return c.json({ ok: true as const, ...caller }, 200);
  });
}
