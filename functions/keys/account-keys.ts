import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError } from '../../core/errors.js';
import { getAccount } from '../../core/store/accounts.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../core/store/api-keys.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse as error, jsonContent, jsonResponse as json } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';

const KEY_ID_PATTERN = /^[A-Za-z0-9]{1,64}$/;
const keyIdParam = z.string().openapi({ param: { name: 'keyId', in: 'path' }, example: '9f2c4e7a1b3d5f60' });

const createBody = z
  .object({
    name: z
      .string({ error: 'name must be a string' })
      .max(100, { error: 'name must be at most 100 characters' })
      .optional()
      .openapi({ example: 'crm integration' }),
  })
  .openapi('NewAccessKey');

const keyView = z
  .object({
    keyId: z.string().openapi({ example: '9f2c4e7a1b3d5f60' }),
    name: z.string().optional().openapi({ example: 'crm integration' }),
    createdAt: z.string().openapi({ example: '2026-01-01T10:00:00.000Z' }),
    lastUsedAt: z.number().int().optional().openapi({ description: 'Unix ms; refreshed at most once a minute', example: 1767261600000 }),
  })
  .openapi('AccessKey');

const adminOnly = 'Admin key only (`API_KEY`).';

const create = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/keys',
  summary: 'Create an access key for one account (the secret is shown once)',
  description: `${adminOnly} The key reaches \`/accounts/{accountId}\` and below, except deleting the account and managing keys.`,
  request: {
    params: z.object({ accountId: accountIdParam }),
    body: { required: false, content: jsonContent(createBody) },
  },
  responses: {
    201: json(
      z.object({
        ok: z.literal(true),
        key: keyView.omit({ lastUsedAt: true }),
        secret: z.string().openapi({
          description: 'The key to send as `Authorization: Bearer <secret>` or `X-Api-Key`; stored only as a hash',
          example: 'wag_sales1_9f2c4e7a1b3d5f60_Qm9vZ2xlLWtleS1leGFtcGxlLW5vdC1yZWFsLXNlY3JldA',
        }),
      }),
      'Created',
    ),
    400: error('name is not a string of at most 100 characters'),
    404: error('Account not found'),
  },
});

const list = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/keys',
  summary: "An account's access keys (never their secrets)",
  description: adminOnly,
  request: { params: z.object({ accountId: accountIdParam }) },
  responses: {
    200: json(z.object({ ok: z.literal(true), keys: z.array(keyView) }), 'Keys, oldest first'),
    404: error('Account not found'),
  },
});

const revoke = createRoute({
  method: 'delete',
  path: '/accounts/{accountId}/keys/{keyId}',
  summary: 'Revoke an access key',
  description: `${adminOnly} Takes effect for the next request.`,
  request: { params: z.object({ accountId: accountIdParam, keyId: keyIdParam }) },
  responses: {
    200: json(z.object({ ok: z.literal(true), message: z.literal('Key revoked') }), 'Revoked'),
    404: error('Account not found, or Key not found'),
  },
});

/** Per-account access keys: create, list, revoke (admin keys only, http/auth.ts). */
export function accountKeyRoutes(services: Pick<Services, 'table'>): OpenAPIHono<AppEnv> {
  const { table } = services;
  return newRouter()
    .openapi(create, async (c) => {
      const account = await getAccount(table, c.req.valid('param').accountId);
      // The body is optional: without one the key has no name.
      const { key, secret } = await createApiKey(table, account._id, c.req.valid('json').name);
      c.get('log').info({ accountId: account._id, keyId: key.keyId }, 'access key created');
      return c.json({ ok: true as const, key, secret }, 201);
    })
    .openapi(list, async (c) => {
      const account = await getAccount(table, c.req.valid('param').accountId);
      return c.json({ ok: true as const, keys: await listApiKeys(table, account._id) }, 200);
    })
    .openapi(revoke, async (c) => {
      const { accountId, keyId } = c.req.valid('param');
      await getAccount(table, accountId);
      // An id that cannot exist is simply not found (ids are validated like account ids).
      if (!KEY_ID_PATTERN.test(keyId) || !(await revokeApiKey(table, accountId, keyId))) throw new NotFoundError('Key not found');
      c.get('log').info({ accountId, keyId }, 'access key revoked');
      return c.json({ ok: true as const, message: 'Key revoked' as const }, 200);
    });
}
