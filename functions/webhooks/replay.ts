import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ValidationError } from '../../core/errors.js';
import { ACCOUNT_ID_PATTERN } from '../../core/jid.js';
import { getAccount } from '../../core/store/accounts.js';
import { replayMessageEvents } from '../../core/webhook-replay.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse as error, jsonContent, jsonResponse as json } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';
import { webhookIdParam, webhookOf } from './fields.js';

const unixMs = (name: string) =>
  z
    .number({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a Unix time in milliseconds`) })
    .int({ error: `${name} must be a Unix time in milliseconds` })
    .nonnegative({ error: `${name} must be a Unix time in milliseconds` })
    .openapi({ example: 1767261600000 });

const body = z
  .object({
    since: unixMs('since').openapi({ description: 'Unix ms, included' }),
    until: unixMs('until').optional().openapi({ description: 'Unix ms, included; default: now' }),
    accountId: z
      .string({ error: 'accountId must be an account id' })
      .regex(ACCOUNT_ID_PATTERN, { error: 'accountId must be an account id' })
      .optional()
      .openapi({ description: "Only this account's messages (a global webhook replays every account's by default)" }),
  })
  .refine((value) => value.until === undefined || value.since <= value.until, { error: 'since must not be after until' })
  .openapi('WebhookReplayRequest');

const NO_MESSAGE_EVENTS = 'webhook does not receive message events';
const OUT_OF_SCOPE = "accountId is outside this webhook's scope";

const accepted = z.object({
  ok: z.literal(true),
  queued: z.number().int().openapi({ description: 'Events enqueued for this webhook' }),
});
const invalid = error(
  `since is required; since/until must be a Unix time in milliseconds; since must not be after until; ${NO_MESSAGE_EVENTS}; or ${OUT_OF_SCOPE}`,
);
const HOW =
  "Re-enqueues the `message` events of the stored messages whose timestamp is in [since, until] that this webhook's scope and filter select (inbound only unless WEBHOOK_INCLUDE_FROM_ME), to this webhook only and with their original X-Webhook-Id. Runs within the request: replay long ranges in windows (docs/webhooks.md).";

const replay = createRoute({
  method: 'post',
  path: '/webhooks/{webhookId}/replay',
  summary: 'Send stored messages of a time range to one webhook again',
  description: `${HOW} With \`API_KEY\` set: admin keys only.`,
  request: {
    params: z.object({ webhookId: webhookIdParam }),
    body: { required: true, content: jsonContent(body) },
  },
  responses: { 202: json(accepted, 'Enqueued'), 400: invalid, 404: error('Webhook not found, or Account not found') },
});

const replayScoped = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/webhooks/{webhookId}/replay',
  summary: "Send stored messages of a time range to one of an account's webhooks again",
  description: `${HOW} An access key of this account may call it; a webhook of another scope is not found here.`,
  request: {
    params: z.object({ accountId: accountIdParam, webhookId: webhookIdParam }),
    body: { required: true, content: jsonContent(body) },
  },
  responses: { 202: json(accepted, 'Enqueued'), 400: invalid, 404: error('Account not found, or Webhook not found') },
});

export function webhookReplayRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table, queues, config } = services;

  async function replayFrom(c: Context<AppEnv>, webhookId: string, scope: string | undefined, input: z.infer<typeof body>) {
    if (scope !== undefined) await getAccount(table, scope);
    const webhook = await webhookOf(table, webhookId, scope);
    if (!webhook.events.includes('*') && !webhook.events.includes('message')) throw new ValidationError(NO_MESSAGE_EVENTS);
    if (input.accountId !== undefined && webhook.accountId !== undefined && input.accountId !== webhook.accountId) {
      throw new ValidationError(OUT_OF_SCOPE);
    }
    if (input.accountId !== undefined) await getAccount(table, input.accountId);
    const range = { since: input.since, until: input.until ?? Date.now(), accountId: input.accountId };
    const started = Date.now();
    const queued = await replayMessageEvents({ table, queues, includeFromMe: config.WEBHOOK_INCLUDE_FROM_ME }, webhook, range);
    c.get('log').info(
      { webhookId, since: range.since, until: range.until, accountId: range.accountId, queued, ms: Date.now() - started },
      'webhook replay queued',
    );
    return { ok: true as const, queued };
  }

  return newRouter()
    .openapi(replay, async (c) => c.json(await replayFrom(c, c.req.valid('param').webhookId, undefined, c.req.valid('json')), 202))
    .openapi(replayScoped, async (c) => {
      const { accountId, webhookId } = c.req.valid('param');
      return c.json(await replayFrom(c, webhookId, accountId, c.req.valid('json')), 202);
    });
}
