import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { newRouter } from './router.js';
import type { AppEnv } from './services.js';

const ping = createRoute({
  method: 'get',
  path: '/ping',
  summary: 'The server is up',
  security: [],
  responses: {
    200: {
      description: 'Pong',
      content: {
        'application/json': {
          schema: z.object({ ok: z.literal(true), pong: z.literal(true), time: z.string() }),
        },
      },
    },
  },
});

export function healthRoutes(): OpenAPIHono<AppEnv> {
  return newRouter().openapi(ping, (c) => c.json({ ok: true as const, pong: true as const, time: new Date().toISOString() }, 200));
}
