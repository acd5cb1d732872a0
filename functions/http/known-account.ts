import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { NotFoundError } from '../../core/errors.js';
import { ACCOUNT_ID_PATTERN } from '../../core/jid.js';
import type { Account } from '../../core/schemas/account.js';
import { getAccount } from '../../core/store/accounts.js';
import type { Table } from '../../core/store/table.js';
import type { AppEnv } from './services.js';

/**
 * Answers 404 `Account not found` for an unknown account before the body is read or judged:
 * the first check of every send route, so that an upload for no account is never stored and a
 * bad body for no account is still a 404. The account is kept for the handler (`accountOf`).
 */
function knownAccount(table: Table): MiddlewareHandler<AppEnv> {
  return async function knownAccountMiddleware(c, next) {
    const accountId = c.req.param('accountId');
    if (!accountId || !ACCOUNT_ID_PATTERN.test(accountId)) throw new NotFoundError('Account not found');
    c.set('account', await getAccount(table, accountId));
    await next();
  };
}

/**
 * Installs knownAccount on `paths` (Hono patterns, any method) of a feature's router, before its
 * routes are added so that it runs first on them, and on any other request that matches.
 */
export function withKnownAccount(router: OpenAPIHono<AppEnv>, table: Table, paths: string[]): OpenAPIHono<AppEnv> {
  const lookUp = knownAccount(table);
  for (const path of paths) router.use(path, lookUp);
  return router;
}

/** The account knownAccount found for this request. */
export function accountOf(c: Context<AppEnv>): Account {
  const account = c.get('account');
  if (!account) throw new Error('knownAccount middleware is not installed on this route');
  return account;
}
