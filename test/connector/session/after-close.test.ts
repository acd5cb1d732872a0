import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { DynamoAuthState } from '../../../connector/auth/dynamo-auth-state.js';
import type { ProxyFailure } from '../../../connector/network/account-proxy.js';
import { afterClose, loggedIn, loginTries, type ClosingSession } from '../../../connector/session/after-close.js';
import type { Lifecycle } from '../../../connector/session/lifecycle.js';

/**
 * A socket that failed at the account's proxy (docs/sending.md, "Proxy"): the close takes the
 * proxy's reason instead of Baileys' code, is retried like a drop, and is reported (event and
 * `lastDisconnect`) once per kind of failure even though the status stays.
 */
const CONNECTION_CLOSED = 428;

function closingSession(lifecycle: Lifecycle) {
  const moves: { next: Lifecycle; reason?: string; report?: boolean }[] = [];
  let retries = 0;
  const session: ClosingSession = {
    log: pino({ level: 'silent' }),
    tries: loginTries(),
    lifecycle: () => lifecycle,
    move: async (next, change = {}) => {
      moves.push({ next, ...(change.reason ? { reason: change.reason } : {}), ...(change.report ? { report: true } : {}) });
    },
    openSocket: () => undefined,
    openSocketLater: () => {
      retries += 1;
    },
    ended: () => undefined,
    announcedVersion: () => undefined,
    // Read only after WhatsApp refused the version, never here.
    waVersion: {
      current: () => {
        throw new Error('the version is not read after a drop');
      },
      newerThan: async () => undefined,
    },
  };
  return { session, moves, retries: () => retries };
}

/** Just what a close reads of the auth state: nothing to store, a device linked or not. */
const authState = (linked: boolean) =>
  ({ flush: async () => undefined, isLinked: () => linked, state: { creds: {} } }) as unknown as DynamoAuthState;

describe('a close after a failure at the proxy', () => {
  it('takes the proxy reason, is retried, and is reported once per kind of failure', async () => {
    const { session, moves, retries } = closingSession('connecting');
    const close = (failure?: ProxyFailure) => afterClose(session, authState(false), CONNECTION_CLOSED, failure);
    await close('proxy_auth_failed');
    await close('proxy_auth_failed');
    await close('proxy_failed');
    expect(moves).toEqual([
      { next: 'connecting', reason: 'proxy_auth_failed', report: true },
      { next: 'connecting', reason: 'proxy_auth_failed' },
      { next: 'connecting', reason: 'proxy_failed', report: true },
    ]);
    expect(retries()).toBe(3);
  });

  it('a linked account is reconnecting; a login in between reports the next failure again', async () => {
    const { session, moves } = closingSession('connected');
    await afterClose(session, authState(true), CONNECTION_CLOSED, 'proxy_forbidden');
    loggedIn(session.tries);
    await afterClose(session, authState(true), CONNECTION_CLOSED, 'proxy_forbidden');
    expect(moves).toEqual([
      { next: 'reconnecting', reason: 'proxy_forbidden', report: true },
      { next: 'reconnecting', reason: 'proxy_forbidden', report: true },
    ]);
  });

  it('without a proxy failure the close keeps its reason and reports nothing extra', async () => {
    const { session, moves } = closingSession('connected');
    await afterClose(session, authState(true), CONNECTION_CLOSED);
    expect(moves).toEqual([{ next: 'reconnecting', reason: 'connection_lost' }]);
  });
});
