import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ValidationError } from '../core/errors.js';
import { FORBIDDEN_TARGET_MESSAGE as FORBIDDEN_TARGET, checkWebhookTarget } from '../core/net/webhook-target.js';
import { isHttpUrl } from '../core/schemas/webhook.js';
import { registerWebhook } from '../core/store/webhooks.js';
import { newRouter } from './router.js';
import type { AppEnv, Services } from './services.js';
import { errorBodySchema } from './validation.js';

const INVALID_URL = 'url must be a valid http or https URL';
/** Long enough for any sensible endpoint, short enough for a DynamoDB sort key. */
const MAX_URL_LENGTH = 2048;

const body = z.object({
  url: z.string({ error: INVALID_URL }).max(MAX_URL_LENGTH, { error: INVALID_URL }).refine(isHttpUrl, { error: INVALID_URL }),
});
const registered = z.object({ ok: z.literal(true), url: z.string(), created: z.boolean() });

const register = createRoute({
  method: 'post',
  path: '/webhooks',
  summary: 'Register a URL that receives inbound messages',
  request: { body: { required: true, content: { 'application/json': { schema: body } } } },
  responses: {
    201: { description: 'A new URL', content: { 'application/json': { schema: registered } } },
    200: { description: 'Already registered', content: { 'application/json': { schema: registered } } },
    400: {
      description: `${INVALID_URL}; or ${FORBIDDEN_TARGET} (metadata, link-local, unspecified, multicast, broadcast, credentials in the URL, or private and loopback unless WEBHOOK_ALLOW_PRIVATE=true)`,
      content: { 'application/json': { schema: errorBodySchema } },
    },
  },
});

export function webhookRoutes(services: Services): OpenAPIHono<AppEnv> {
  return newRouter().openapi(register, async (c) => {
    const { url } = c.req.valid('json');
    const target = await checkWebhookTarget(url, { allowPrivate: services.config.WEBHOOK_ALLOW_PRIVATE });
    if (!target.allowed) {
      c.get('log').info({ reason: target.reason }, 'webhook registration refused');
      throw new ValidationError(FORBIDDEN_TARGET);
    }
    const { created } = await registerWebhook(services.table, url);
    return created ? c.json({ ok: true as const, url, created }, 201) : c.json({ ok: true as const, url, created }, 200);
  });
}
