import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { newCommandId } from '../../core/ids.js';
import { getAccount, updateAccountStatus } from '../../core/store/accounts.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonResponse, messageResponse } from '../http/responses.js';
import { accountIdParam } from '../http/validation.js';

const params = z.object({ accountId: accountIdParam });
const notFound = errorResponse('Account not found');

const status = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/status',
  summary: 'Live connection status',
  request: { params },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true), status: z.string(), accountId: z.string(), lastUpdate: z.string() }), 'Status'),
    404: notFound,
  },
});

const connect = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/connect',
  summary: 'Start a connection (a QR in the log unless a session is saved)',
  request: { params },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true), message: z.string(), status: z.literal('connecting') }), 'Connecting'),
    404: notFound,
  },
});

const disconnect = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/disconnect',
  summary: 'Close the connection, keeping the session and data',
  request: { params },
  responses: { 200: messageResponse('Disconnecting'), 404: notFound },
});

export function connectionRoutes(services: Services): OpenAPIHono<AppEnv> {
  const { table, queues } = services;
  return newRouter()
    .openapi(status, async (c) => {
      const account = await getAccount(table, c.req.valid('param').accountId);
      return c.json({ ok: true as const, status: account.currentStatus, accountId: account._id, lastUpdate: account.lastUpdate }, 200);
    })
    .openapi(connect, async (c) => {
      const account = await getAccount(table, c.req.valid('param').accountId);
      await updateAccountStatus(table, account._id, { status: 'connecting', hasQR: false });
      await queues.sendCommand({ type: 'connect', accountId: account._id, commandId: newCommandId(), payload: {} });
      return c.json({ ok: true as const, message: 'Connection initiated', status: 'connecting' as const }, 200);
    })
    .openapi(disconnect, async (c) => {
      const account = await getAccount(table, c.req.valid('param').accountId);
      await queues.sendCommand({ type: 'disconnect', accountId: account._id, commandId: newCommandId(), payload: {} });
      return c.json({ ok: true as const, message: 'Disconnect requested; account data is kept' }, 200);
    });
}
