import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import type { Account } from '../../core/schemas/account.js';
import { mediaStoreOf, type MediaStore } from '../../core/media-store.js';
import { createQueues, type Queues } from '../../core/queues.js';
import { tableOf, type Table } from '../../core/store/table.js';

/** What the HTTP app needs, built once per process (per Lambda container). */
export interface AppDeps {
  config: Config;
  clients: AwsClients;
  logger?: Logger;
}

export interface Services {
  config: Config;
  table: Table;
  media: MediaStore;
  queues: Queues;
  log: Logger;
}

export function createServices(deps: AppDeps & { logger: Logger }): Services {
  return {
    config: deps.config,
    table: tableOf(deps.config, deps.clients),
    media: mediaStoreOf(deps.config, deps.clients),
    queues: createQueues(deps.config, deps.clients, deps.logger),
    log: deps.logger,
  };
}

/** Hono context variables set by the request middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    log: Logger;
    /** Set by knownAccount on the routes that use it. */
    account?: Account;
    /** Set by a send answered "queued" (messages/async-sends.ts): the answer becomes a 202. */
    queuedSend?: { messageId: string; notBefore: number };
    /** Who is calling, set by authenticate (http/auth.ts) on every route that takes a key. */
    caller?: Caller;
  };
}

/**
 * What the caller's key reaches: every route (`admin`, a key of `API_KEY`), one account's routes
 * (`account`, an account key, with its `accountId`), or every route with no key at all (`open`,
 * when `API_KEY` is unset).
 */
export type Caller = { role: 'admin' } | { role: 'account'; accountId: string } | { role: 'open' };
