import type { Context, MiddlewareHandler } from 'hono';
import { NotFoundError } from '../../core/errors.js';
import { ACCOUNT_ID_PATTERN } from '../../core/jid.js';
import type { Account } from '../../core/schemas/account.js';
import { getAccount } from '../../core/store/accounts.js';
import type { Table } from '../../core/store/table.js';
import type { AppEnv } from './services.js';

/**
 * Answers 404 `Account not found` for an unknown account before the body is read or judged:
 * the first check of every send route, the pairing code and the chat actions, so that an upload
 * for no account is never stored and a bad body for no account is still a 404. The account is
 * kept for the handler (`accountOf`). Installed by featureRouter (router.ts) on the paths a
 * feature's routes.ts names.
 */
export function knownAccount(table: Table): MiddlewareHandler<AppEnv> {
  return async function knownAccountMiddleware(c, next) {
    const accountId = c.req.param('accountId');
    if (!accountId || !ACCOUNT_ID_PATTERN.test(accountId)) throw new NotFoundError('Account not found');
    c.set('account', await getAccount(table, accountId));
    await next();
  };
}

/** The account knownAccount found for this request. */
export function accountOf(c: Context<AppEnv>): Account {
  const account = c.get('account');
  if (!account) throw new Error('knownAccount middleware is not installed on this route');
  return account;
}
