import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from '../../core/logger.js';
import { hashKey, sameHash, touchApiKey, verifyAccountKey } from '../../core/store/api-keys.js';
import { DOCS_PATHS } from '../system/docs.js';
import type { ErrorBody } from './errors.js';
import type { AppEnv, Caller, Services } from './services.js';

/** Routes anyone may call, keys or not: liveness and the API's own description, as data and as a page. */
const PUBLIC_PATHS = new Set(['/ping', '/openapi.json', ...DOCS_PATHS]);

/** Routes every valid key reaches, an account key's included: what the caller's key reaches (`GET /me`). */
export const ANY_KEY_PATHS: ReadonlySet<string> = new Set(['/me']);

/** `lastUsedAt` is written at most this often per key, off the request's path. */
const LAST_USED_RESOLUTION_MS = 60_000;
const MAX_TRACKED_KEYS = 10_000;

/** The admin keys of `API_KEY` (comma-separated, so an old and a new key work during a rotation). */
export function adminKeysOf(apiKey: string | undefined): string[] {
  return (apiKey ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key.length > 0);
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** One warn line at start when the API is open and reachable from beyond this machine. */
export function warnWhenOpen(logger: Logger, apiKey: string | undefined, host: string): void {
  if (adminKeysOf(apiKey).length > 0 || isLoopback(host)) return;
  logger.warn({ host }, 'API_KEY is not set: anyone who can reach this address can use the API without a key');
}

function presentedKey(c: Context<AppEnv>): string | undefined {
  const authorization = c.req.header('authorization');
  const bearer = authorization && /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
  return bearer || c.req.header('x-api-key')?.trim() || undefined;
}

/**
 * What an account key may reach: `/accounts/<its account>` and below, except deleting the
 * account and managing keys, and the routes of ANY_KEY_PATHS. The path is the raw one Hono
 * routes on, compared segment by segment.
 */
function accountKeyAllows(method: string, path: string, accountId: string): boolean {
  if (ANY_KEY_PATHS.has(path)) return true;
  const segments = path.split('/').slice(1);
  if (segments[0] !== 'accounts' || segments[1] !== accountId) return false;
  const below = segments.slice(2).filter((segment) => segment.length > 0);
  if (below.length === 0) return method !== 'DELETE';
  return below[0] !== 'keys';
}

/**
 * Authentication, before routing and validation (an unknown account without a key is 401, not
 * 404). Off when `API_KEY` is unset. The caller it found is the context's `caller` (`open` when
 * keys are off; not set on the public paths when they are on). Admin keys are compared as SHA-256 digests in constant
 * time; an account key costs one GetItem (core/store/api-keys.ts).
 */
export function authenticate(services: Services): MiddlewareHandler<AppEnv> {
  const adminHashes = adminKeysOf(services.config.API_KEY).map(hashKey);
  const lastTouched = new Map<string, number>();

  const unauthorized = (c: Context<AppEnv>) =>
    c.json({ ok: false, error: 'Unauthorized' } satisfies ErrorBody, 401, { 'WWW-Authenticate': 'Bearer' });
  const forbidden = (c: Context<AppEnv>) => c.json({ ok: false, error: 'Forbidden' } satisfies ErrorBody, 403);

  /** Fire and forget: a failed write only loses a timestamp, never the request. */
  const noteUse = (c: Context<AppEnv>, accountId: string, keyId: string, storedLastUse: number | undefined) => {
    const now = Date.now();
    const last = Math.max(storedLastUse ?? 0, lastTouched.get(keyId) ?? 0);
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    if (lastTouched.size >= MAX_TRACKED_KEYS) lastTouched.clear();
    lastTouched.set(keyId, now);
    touchApiKey(services.table, accountId, keyId, now).catch((error: unknown) =>
      c.get('log').warn({ err: error, accountId, keyId }, 'recording a key use failed'),
    );
  };

  const proceed = (c: Context<AppEnv>, next: () => Promise<void>, caller: Caller) => {
    c.set('caller', caller);
    return next();
  };

  return async function authenticateMiddleware(c, next) {
    if (adminHashes.length === 0) return proceed(c, next, { role: 'open' });
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    const key = presentedKey(c);
    if (!key) return unauthorized(c);
    const digest = hashKey(key);
    // Every admin key is compared, so the time taken does not tell which one matched.
    let admin = false;
    for (const adminHash of adminHashes) admin = sameHash(digest, adminHash) || admin;
    if (admin) return proceed(c, next, { role: 'admin' });
    const accountKey = await verifyAccountKey(services.table, key);
    if (!accountKey) return unauthorized(c);
    if (!accountKeyAllows(c.req.method, c.req.path, accountKey.accountId)) return forbidden(c);
    noteUse(c, accountKey.accountId, accountKey.keyId, accountKey.lastUsedAt);
    return proceed(c, next, { role: 'account', accountId: accountKey.accountId });
  };
}
