import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { jidSchema } from '../../core/schemas/jid.js';
import type { SocketQuery } from '../../core/schemas/socket-query.js';
import { runSocketQuery } from './group-wait.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonContent as json } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';

const PHONE_ERROR = 'phone must be 6 to 15 digits with country code';

const phoneParams = z.object({
  accountId: accountIdParam,
  phone: z
    .string({ error: PHONE_ERROR })
    .transform((value, ctx) => {
      const digits = value.trim().replace(/^\+/, '');
      if (!/^\d{6,15}$/.test(digits)) {
        ctx.addIssue({ code: 'custom', message: PHONE_ERROR });
        return z.NEVER;
      }
      return digits;
    })
    .openapi({ param: { name: 'phone', in: 'path' }, type: 'string', example: '15550001111' }),
});

const jidParams = z.object({
  accountId: accountIdParam,
  jid: jidSchema('jid').openapi({ param: { name: 'jid', in: 'path' }, type: 'string', example: '15550001111@s.whatsapp.net' }),
});

const errors = {
  400: errorResponse('Invalid phone or JID'),
  404: errorResponse('Account not found'),
  500: errorResponse('internal_error: not connected, or no answer from WhatsApp in time'),
};

const exists = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/contacts/{phone}/exists',
  summary: 'Whether a phone number is on WhatsApp, and its JID when it is',
  request: { params: phoneParams },
  responses: {
    200: {
      description: 'The answer',
      content: json(
        z.object({
          ok: z.literal(true),
          exists: z.boolean(),
          jid: z.string().optional().openapi({ example: '15550001111@s.whatsapp.net' }),
        }),
      ),
    },
    ...errors,
  },
});

const picture = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/contacts/{jid}/picture',
  summary: "A contact's (or group's) profile picture URL; null when there is none the account may see",
  request: { params: jidParams },
  responses: {
    200: { description: 'The URL', content: json(z.object({ ok: z.literal(true), url: z.string().nullable() })) },
    ...errors,
  },
});

/**
 * Questions about a contact that only WhatsApp can answer: params are judged first (400), then
 * the account is looked up (404) and must be connected. They are socket queries (`socket_query`),
 * run on the live socket through the same request/answer path as the group operations (group-wait.ts).
 */
export function contactRoutes(services: Services): OpenAPIHono<AppEnv> {
  const run = <T>(accountId: string, query: SocketQuery) => runSocketQuery<T>(services, accountId, query);

  return newRouter()
    .openapi(exists, async (c) => {
      const { accountId, phone } = c.req.valid('param');
      const answer = await run<{ exists: boolean; jid?: string }>(accountId, { op: 'contact_exists', phone });
      return c.json({ ok: true as const, exists: answer.exists, ...(answer.jid ? { jid: answer.jid } : {}) }, 200);
    })
    .openapi(picture, async (c) => {
      const { accountId, jid } = c.req.valid('param');
      const { url } = await run<{ url: string | null }>(accountId, { op: 'contact_picture', jid });
      return c.json({ ok: true as const, url }, 200);
    });
}
