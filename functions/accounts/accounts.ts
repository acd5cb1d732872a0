import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ValidationError } from '../../core/errors.js';
import { defaultCollectionName, isValidAccountId, isValidCollectionName } from '../../core/jid.js';
import { newCommandId } from '../../core/ids.js';
import { lastDisconnectSchema, sendPauseView, type Account } from '../../core/schemas/account.js';
import { sendPauseReasonSchema } from '../../core/send-pause.js';
import { deleteAccountData } from '../../core/store/account-deletion.js';
import { createAccount, deleteAccountRecord, getAccount, listAccountViews, listAccountViewsPage } from '../../core/store/accounts.js';
import { releaseCollection } from '../../core/store/collection-claims.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse as error, jsonContent, jsonResponse as json, messageResponse } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';
import { checkProxyOf, pacingOf, settingsPatchBody } from './settings.js';
import { defaultSettings, mergeSettings } from '../../core/schemas/settings.js';

const createBody = z.object({
  id: z.string({ error: 'id is required' }).min(1, { error: 'id is required' }),
  name: z.string({ error: 'name must be a string' }).max(256, { error: 'name must be at most 256 characters' }).optional(),
  collectionName: z.string({ error: 'collectionName must be a string' }).optional(),
  settings: settingsPatchBody.optional(),
});

const accountView = z
  .object({
    _id: z.string(),
    name: z.string().optional(),
    collectionName: z.string(),
    status: z.string(),
    createdAt: z.string(),
    currentStatus: z.string(),
    hasQR: z.boolean(),
    lastDisconnect: lastDisconnectSchema
      .optional()
      .openapi({ description: 'The latest disconnect: its reason (as in the session.status event) and when (Unix ms)' }),
    sendPause: z
      .object({
        reason: sendPauseReasonSchema,
        until: z.number().int().openapi({ description: 'Unix ms: sending resumes by itself then' }),
      })
      .optional()
      .openapi({
        description:
          "Present while the account's sending is paused after WhatsApp refused a send (429 `rate_limited`, 463 `reachout_timelock`): sends are refused until `until`",
      }),
  })
  .openapi('Account');
const createdView = accountView.omit({ currentStatus: true, hasQR: true, lastDisconnect: true, sendPause: true });

/** The list/get form of an account (docs/api.md): without internal fields such as lastUpdate. */
function view(account: Account) {
  return {
    _id: account._id,
    ...(account.name !== undefined ? { name: account.name } : {}),
    collectionName: account.collectionName,
    status: account.status,
    createdAt: account.createdAt,
    currentStatus: account.currentStatus,
    hasQR: account.hasQR,
    ...(account.lastDisconnect ? { lastDisconnect: account.lastDisconnect } : {}),
    ...withSendPause(account),
  };
}

function withSendPause(account: Account) {
  const sendPause = sendPauseView(account.sendPause);
  return sendPause ? { sendPause } : {};
}

const create = createRoute({
  method: 'post',
  path: '/accounts',
  summary: 'Create an account (with its settings, optionally) and start its connection (QR in the server log)',
  request: { body: { required: true, content: jsonContent(createBody) } },
  responses: {
    201: json(z.object({ ok: z.literal(true), account: createdView }), 'Created'),
    400: error('id missing or invalid, or already in use; a setting unknown or invalid'),
    409: error('collectionName already in use (another account holds that session)'),
  },
});

/** A page of accounts is asked for with `limit` or `cursor`; without either, every account (the spec's answer). */
const MAX_ACCOUNTS_PAGE = 500;
const DEFAULT_ACCOUNTS_PAGE = 100;
const listQuery = z.object({
  limit: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return undefined;
      const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
      if (!Number.isInteger(n) || n < 1 || n > MAX_ACCOUNTS_PAGE) {
        ctx.addIssue({ code: 'custom', message: `limit must be an integer from 1 to ${MAX_ACCOUNTS_PAGE}` });
        return z.NEVER;
      }
      return n;
    })
    .openapi({
      param: { name: 'limit', in: 'query' },
      type: 'integer',
      description: `A page of at most this many (1 to ${MAX_ACCOUNTS_PAGE})`,
    }),
  cursor: z
    .string()
    .max(4096, { error: 'cursor is not valid' })
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' }, description: "The previous page's `nextCursor`" }),
});

const list = createRoute({
  method: 'get',
  path: '/accounts',
  summary: 'All accounts, or a page of them',
  description: `Without \`limit\` or \`cursor\`: every account, oldest first. With either: at most \`limit\` (default ${DEFAULT_ACCOUNTS_PAGE}) and \`nextCursor\` while more remain.`,
  request: { query: listQuery },
  responses: {
    200: json(
      z.object({
        ok: z.literal(true),
        accounts: z.array(accountView),
        nextCursor: z.string().optional().openapi({ description: 'Present when a page was asked for and more accounts remain' }),
      }),
      'Accounts',
    ),
    400: error('limit out of range, or a cursor no page gave out'),
  },
});

const get = createRoute({
  method: 'get',
  path: '/accounts/{accountId}',
  summary: 'One account',
  request: { params: z.object({ accountId: accountIdParam }) },
  responses: {
    200: json(z.object({ ok: z.literal(true), account: accountView }), 'The account'),
    404: error('Account not found'),
  },
});

const remove = createRoute({
  method: 'delete',
  path: '/accounts/{accountId}',
  summary: 'Delete an account with its messages, media and session',
  request: { params: z.object({ accountId: accountIdParam }) },
  responses: {
    200: messageResponse('Deleted'),
    404: error('Account not found'),
  },
});

export function accountRecordRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table, media, queues } = services;
  return newRouter()
    .openapi(create, async (c) => {
      const body = c.req.valid('json');
      if (!isValidAccountId(body.id)) throw new ValidationError('id must be 1-64 letters or digits, without spaces');
      const collectionName = body.collectionName ?? defaultCollectionName(body.id);
      if (!isValidCollectionName(collectionName)) {
        throw new ValidationError('collectionName must be 1-128 letters, digits, _ or -');
      }
      const settings = mergeSettings(defaultSettings(pacingOf(services)), body.settings ?? {});
      if ('problem' in settings) throw new ValidationError(settings.problem);
      await checkProxyOf(c, services, body.settings);
      const account = await createAccount(table, {
        id: body.id,
        ...(body.name !== undefined ? { name: body.name } : {}),
        collectionName,
        status: 'connecting',
        settings,
      });
      try {
        await queues.sendCommand({ type: 'connect', accountId: account._id, commandId: newCommandId(), payload: {} });
      } catch (cause) {
        // Without its connect command the account would sit in `connecting` forever.
        await deleteAccountRecord(table, account._id);
        await releaseCollection(table, collectionName, account._id);
        throw cause;
      }
      c.get('log').info({ accountId: account._id }, 'account created');
      const { currentStatus: _current, hasQR: _hasQR, lastDisconnect: _lastDisconnect, sendPause: _sendPause, ...created } = view(account);
      return c.json({ ok: true as const, account: created }, 201);
    })
    .openapi(list, async (c) => {
      const { limit, cursor } = c.req.valid('query');
      // Parsed straight into the answer's shape (core/schemas/account.ts, accountViewSchema).
      if (limit === undefined && cursor === undefined) return c.json({ ok: true as const, accounts: await listAccountViews(table) }, 200);
      const page = await listAccountViewsPage(table, { limit: limit ?? DEFAULT_ACCOUNTS_PAGE, cursor });
      return c.json({ ok: true as const, ...page }, 200);
    })
    .openapi(get, async (c) => {
      const account = await getAccount(table, c.req.valid('param').accountId);
      return c.json({ ok: true as const, account: view(account) }, 200);
    })
    .openapi(remove, async (c) => {
      const account = await getAccount(table, c.req.valid('param').accountId, true);
      // The connector closes the session and sweeps again for anything written meanwhile.
      await queues.sendCommand({
        type: 'delete_account',
        accountId: account._id,
        commandId: newCommandId(),
        payload: { collectionName: account.collectionName },
      });
      const counts = await deleteAccountData(table, media, account._id, account.collectionName);
      c.get('log').info({ accountId: account._id, ...counts }, 'account deleted');
      return c.json({ ok: true as const, message: `Account ${account._id} deleted` }, 200);
    });
}
