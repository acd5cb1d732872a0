import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { TARGET_NOT_ALLOWED, isArn, parseAwsTarget, targetAllowed } from '../../core/aws-targets.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { FORBIDDEN_TARGET_MESSAGE as FORBIDDEN_TARGET, checkWebhookTarget } from '../../core/net/webhook-target.js';
import { isHttpUrl, type WebhookRegistration } from '../../core/schemas/webhook.js';
import { getAccount } from '../../core/store/accounts.js';
import { deleteWebhook, listAccountWebhooks, listWebhooks, registerWebhook } from '../../core/store/webhooks.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse as error, jsonContent, jsonResponse as json } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';
import { WEBHOOK_NOT_FOUND, webhookEventsField, webhookIdParam, webhookOf } from './fields.js';

const INVALID_URL = 'url must be a valid http or https URL';
const INVALID_ARN =
  'url must be an SQS queue ARN (arn:aws:sqs:<region>:<account>:<queue>) or an EventBridge event bus ARN (arn:aws:events:<region>:<account>:event-bus/<name>)';
const SECRET_FOR_URLS = 'secret signs http(s) deliveries only: an AWS target takes none';
/**
 * Long enough for any sensible endpoint, short enough for a DynamoDB sort key (at most 1024
 * bytes): the URL is part of the registration's key, after up to 77 bytes of scope (core/keys.ts).
 */
const MAX_URL_BYTES = 900;
/** A signing secret: long enough to resist guessing, short enough to be a key and not a payload. */
const MIN_SECRET_LENGTH = 16;
const MAX_SECRET_LENGTH = 256;
const INVALID_SECRET = `secret must be a string of ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters, or null to remove it`;

const body = z
  .object({
    url: z
      .string({ error: INVALID_URL })
      .superRefine((url, ctx) => {
        if (Buffer.byteLength(url, 'utf8') > MAX_URL_BYTES) ctx.addIssue({ code: 'custom', message: INVALID_URL });
        else if (isArn(url)) {
          if (!parseAwsTarget(url)) ctx.addIssue({ code: 'custom', message: INVALID_ARN });
        } else if (!isHttpUrl(url)) ctx.addIssue({ code: 'custom', message: INVALID_URL });
      })
      .openapi({
        description: `An absolute http(s) URL of at most ${MAX_URL_BYTES} bytes, or an AWS target that \`EVENT_TARGET_ARNS\` allows: an SQS queue, \`arn:aws:sqs:<region>:<account>:<queue>\` (the event body is the message body), or an EventBridge event bus, \`arn:aws:events:<region>:<account>:event-bus/<name>\` (source \`wa-gateway\`, detail-type the event name, detail the body)`,
        example: 'https://example.com/hook',
      }),
    events: webhookEventsField.optional(),
    secret: z
      .string({ error: INVALID_SECRET })
      .min(MIN_SECRET_LENGTH, { error: INVALID_SECRET })
      .max(MAX_SECRET_LENGTH, { error: INVALID_SECRET })
      .nullable()
      .optional()
      .openapi({
        description:
          'Signs every POST (`X-Webhook-Signature`); not for an AWS target. Never answered. Omitted on a re-registration: the current one stays; null removes it.',
      }),
  })
  .openapi('WebhookRegistrationRequest');

/** A registration as answered: never the secret. */
const webhookView = z
  .object({
    webhookId: z.string().openapi({ example: 'wh_3q2-7wEeRkGkYpXz0aB1cQ' }),
    url: z.string().openapi({ example: 'https://example.com/hook' }),
    events: z.array(z.string()).openapi({ example: ['message'] }),
    accountId: z.string().optional().openapi({ description: 'Present when the webhook is scoped to one account' }),
    createdAt: z.string().openapi({ example: '2026-01-01T10:00:00.000Z' }),
  })
  .openapi('Webhook');

function view(registration: WebhookRegistration): z.infer<typeof webhookView> {
  return {
    webhookId: registration.webhookId,
    url: registration.url,
    events: registration.events,
    ...(registration.accountId !== undefined ? { accountId: registration.accountId } : {}),
    createdAt: registration.createdAt,
  };
}

/** Oldest first; ties (a burst of registrations) by id, so the order is stable. */
const byCreation = (a: WebhookRegistration, b: WebhookRegistration) =>
  a.createdAt.localeCompare(b.createdAt) || a.webhookId.localeCompare(b.webhookId);

const registered = z.object({ ok: z.literal(true), url: z.string(), created: z.boolean(), webhook: webhookView });
const listed = z.object({ ok: z.literal(true), webhooks: z.array(webhookView) });
const deleted = z.object({ ok: z.literal(true), message: z.literal('Webhook deleted') });

const invalidBody = error(
  `${INVALID_URL}; ${INVALID_ARN}; ${TARGET_NOT_ALLOWED} (an ARN that EVENT_TARGET_ARNS does not allow); ${FORBIDDEN_TARGET} (metadata, link-local, unspecified, multicast, broadcast, credentials in the URL, or private and loopback unless WEBHOOK_ALLOW_PRIVATE=true); unknown event: <name>; ${INVALID_SECRET}; or ${SECRET_FOR_URLS}`,
);
const adminWhenKeysAreOn = 'With `API_KEY` set: admin keys only.';
const accountKeyToo = 'An access key of this account may call it too.';

const register = createRoute({
  method: 'post',
  path: '/webhooks',
  summary: "Register a URL that receives every account's events (default: inbound messages)",
  description: `${adminWhenKeysAreOn} The same URL again answers 200 with the same webhookId and replaces \`events\` and \`secret\` with those given.`,
  request: { body: { required: true, content: jsonContent(body) } },
  responses: {
    201: json(registered, 'A new registration'),
    200: json(registered, 'Already registered (its events and secret replaced by those given)'),
    400: invalidBody,
  },
});

const registerScoped = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/webhooks',
  summary: "Register a URL that receives one account's events",
  description: `${accountKeyToo} The same URL again for this account answers 200 with the same webhookId and replaces \`events\` and \`secret\` with those given.`,
  request: {
    params: z.object({ accountId: accountIdParam }),
    body: { required: true, content: jsonContent(body) },
  },
  responses: {
    201: json(registered, 'A new registration'),
    200: json(registered, 'Already registered for this account (its events and secret replaced by those given)'),
    400: invalidBody,
    404: error('Account not found'),
  },
});

const list = createRoute({
  method: 'get',
  path: '/webhooks',
  summary: 'Every webhook, global and scoped (never their secrets)',
  description: adminWhenKeysAreOn,
  responses: { 200: json(listed, 'Webhooks, oldest first') },
});

const listScoped = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/webhooks',
  summary: 'The webhooks scoped to one account (never their secrets; global ones are in GET /webhooks)',
  description: accountKeyToo,
  request: { params: z.object({ accountId: accountIdParam }) },
  responses: { 200: json(listed, 'Webhooks, oldest first'), 404: error('Account not found') },
});

const remove = createRoute({
  method: 'delete',
  path: '/webhooks/{webhookId}',
  summary: 'Delete a webhook (takes effect for events within 10 s)',
  description: adminWhenKeysAreOn,
  request: { params: z.object({ webhookId: webhookIdParam }) },
  responses: { 200: json(deleted, 'Deleted'), 404: error('Webhook not found') },
});

const removeScoped = createRoute({
  method: 'delete',
  path: '/accounts/{accountId}/webhooks/{webhookId}',
  summary: "Delete one of an account's webhooks (takes effect for events within 10 s)",
  description: `${accountKeyToo} A webhook of another scope is not found here.`,
  request: { params: z.object({ accountId: accountIdParam, webhookId: webhookIdParam }) },
  responses: { 200: json(deleted, 'Deleted'), 404: error('Account not found, or Webhook not found') },
});

export function webhookRegistrationRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table } = services;

  /** An AWS target must be allowed by EVENT_TARGET_ARNS; a URL, by the address policy. */
  async function checkTarget(c: Context<AppEnv>, input: z.infer<typeof body>): Promise<void> {
    if (isArn(input.url)) {
      if (!targetAllowed(input.url, services.config.EVENT_TARGET_ARNS)) {
        c.get('log').info({ target: input.url }, 'webhook registration refused: target not in EVENT_TARGET_ARNS');
        throw new ValidationError(TARGET_NOT_ALLOWED);
      }
      if (typeof input.secret === 'string') throw new ValidationError(SECRET_FOR_URLS);
      return;
    }
    const target = await checkWebhookTarget(input.url, { allowPrivate: services.config.WEBHOOK_ALLOW_PRIVATE });
    if (!target.allowed) {
      c.get('log').info({ reason: target.reason }, 'webhook registration refused');
      throw new ValidationError(FORBIDDEN_TARGET);
    }
  }

  async function registerFrom(c: Context<AppEnv>, input: z.infer<typeof body>, accountId: string | undefined) {
    await checkTarget(c, input);
    if (accountId !== undefined) await getAccount(table, accountId);
    const { created, registration } = await registerWebhook(table, { ...input, accountId });
    c.get('log').info({ webhookId: registration.webhookId, accountId, events: registration.events, created }, 'webhook registered');
    return { ok: true as const, url: registration.url, created, webhook: view(registration) };
  }

  async function deleteFrom(c: Context<AppEnv>, webhookId: string, accountId: string | undefined) {
    const registration = await webhookOf(table, webhookId, accountId);
    // Gone between the read and the delete: another request deleted it.
    if (!(await deleteWebhook(table, registration.url, registration.accountId))) throw new NotFoundError(WEBHOOK_NOT_FOUND);
    c.get('log').info({ webhookId, accountId: registration.accountId }, 'webhook deleted');
    return { ok: true as const, message: 'Webhook deleted' as const };
  }

  return newRouter()
    .openapi(register, async (c) => {
      const answer = await registerFrom(c, c.req.valid('json'), undefined);
      return answer.created ? c.json(answer, 201) : c.json(answer, 200);
    })
    .openapi(registerScoped, async (c) => {
      const answer = await registerFrom(c, c.req.valid('json'), c.req.valid('param').accountId);
      return answer.created ? c.json(answer, 201) : c.json(answer, 200);
    })
    .openapi(list, async (c) => {
      const webhooks = (await listWebhooks(table)).sort(byCreation).map(view);
      return c.json({ ok: true as const, webhooks }, 200);
    })
    .openapi(listScoped, async (c) => {
      const account = await getAccount(table, c.req.valid('param').accountId);
      const webhooks = (await listAccountWebhooks(table, account._id)).sort(byCreation).map(view);
      return c.json({ ok: true as const, webhooks }, 200);
    })
    .openapi(remove, async (c) => c.json(await deleteFrom(c, c.req.valid('param').webhookId, undefined), 200))
    .openapi(removeScoped, async (c) => {
      const { accountId, webhookId } = c.req.valid('param');
      await getAccount(table, accountId);
      return c.json(await deleteFrom(c, webhookId, accountId), 200);
    });
}
