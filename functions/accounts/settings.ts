import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ValidationError } from '../../core/errors.js';
import { newCommandId } from '../../core/ids.js';
import { checkProxyTarget, FORBIDDEN_PROXY_MESSAGE } from '../../core/net/proxy-target.js';
import { accountSettingsSchema, settingsPatchSchema, settingsView, type SettingsPatch } from '../../core/schemas/settings.js';
import { settingsOf, updateSettings } from '../../core/store/account-settings.js';
import { accountOf } from '../http/known-account.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse as error, jsonContent, jsonResponse as json } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';

/** The settings as answered (the proxy password as `***`), in the document. */
const settingsAnswerSchema = accountSettingsSchema
  .extend({
    proxy: z
      .object({ url: z.string() })
      .nullable()
      .openapi({ description: 'null: none. The URL as given, its password replaced by `***`' }),
    callRejectMessage: z.string().optional().openapi({ description: 'Absent: declined callers get no message' }),
  })
  .openapi('AccountSettings');

/**
 * A PATCH body, and `settings` of POST /accounts. A copy made here: the core schema may have been
 * made before zod-openapi extended zod (a process that imports the core first, as the client
 * version suite does), and only schemas made after it have `.openapi`.
 */
export const settingsPatchBody = settingsPatchSchema.clone().openapi('AccountSettingsPatch', {
  description: 'Any subset of the settings; nested objects merge field by field. `null` removes the proxy or the call-reject message',
});

/** `pacing`: new accounts' `sendPolicy.enabled` (SEND_PACING_DEFAULT). */
export const pacingOf = (services: Services): boolean => services.config.SEND_PACING_DEFAULT === 'on';

/**
 * A proxy's host must be allowed like a webhook's (core/net/proxy-target.ts). The reason is
 * logged without the URL, which may carry the password.
 */
export async function checkProxyOf(c: Context<AppEnv>, services: Services, patch: SettingsPatch | undefined): Promise<void> {
  const url = patch?.proxy?.url;
  if (url === undefined) return;
  const verdict = await checkProxyTarget(url, { allowPrivate: services.config.WEBHOOK_ALLOW_PRIVATE });
  if (!verdict.allowed) {
    c.get('log').info({ reason: verdict.reason }, 'proxy refused');
    throw new ValidationError(FORBIDDEN_PROXY_MESSAGE);
  }
}

const params = z.object({ accountId: accountIdParam });
const answer = json(z.object({ ok: z.literal(true), settings: settingsAnswerSchema }), 'The whole settings');

const get = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/settings',
  summary: "The account's settings: pacing, proxy, calls, groups, history (docs/sending.md)",
  request: { params },
  responses: { 200: answer, 404: error('Account not found') },
});

const patch = createRoute({
  method: 'patch',
  path: '/accounts/{accountId}/settings',
  summary: 'Change some settings; answers them all',
  description:
    'Merged field by field (`{sendPolicy: {perMinute: 6}}` changes that one). A running session applies them without a restart; a new proxy is used from the next connect.',
  request: { params, body: { required: true, content: jsonContent(settingsPatchBody) } },
  responses: {
    200: answer,
    400: error('A field unknown or invalid (the error names it), or a proxy at a forbidden address'),
    404: error('Account not found'),
    409: error('Changed by many other requests at the same time; try again'),
  },
});

export function settingsRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table, queues } = services;
  return newRouter()
    .openapi(get, (c) => c.json({ ok: true as const, settings: settingsView(settingsOf(accountOf(c), pacingOf(services))) }, 200))
    .openapi(patch, async (c) => {
      const account = accountOf(c);
      const body = c.req.valid('json');
      await checkProxyOf(c, services, body);
      const settings = await updateSettings(table, account._id, body, pacingOf(services), account);
      // The account's session reads them again (connector/commands/settings-handlers.ts).
      await queues.sendCommand({ type: 'settings_changed', accountId: account._id, commandId: newCommandId(), payload: {} });
      // The fields changed, never their values: a proxy URL may carry a password.
      c.get('log').info({ accountId: account._id, fields: Object.keys(body) }, 'account settings changed');
      return c.json({ ok: true as const, settings: settingsView(settings) }, 200);
    });
}
