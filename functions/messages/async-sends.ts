import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/services.js';
import type { IdempotentRequest } from './idempotency.js';
import type { SendOptions } from './send-wait.js';

/**
 * `Prefer: respond-async` on a send route (RFC 7240; docs/sending.md#paced-sends): a paced
 * account's send is answered once queued, 202 `{ok, messageId, status: "queued", notBefore}`,
 * whatever the route answers once a send is done. The routes hand sendAndWait `sendOptionsOf(c)`;
 * `queuedAnswer`, installed on the send paths, turns the route's answer into the 202 when the
 * send was queued. An account with pacing off sends at once and answers as usual (a server may
 * ignore a preference).
 */

/** Whether the request's `Prefer` header asks for `respond-async` (one of its comma-separated preferences). */
function prefersAsync(prefer: string | undefined): boolean {
  if (!prefer) return false;
  return prefer.split(',').some((preference) => preference.split(';')[0]?.trim().toLowerCase() === 'respond-async');
}

/** The options of a send made by this request: its signal, its Idempotency-Key, its preference. */
export function sendOptionsOf(c: Context<AppEnv>, idempotency: IdempotentRequest | undefined): SendOptions {
  return {
    signal: c.req.raw.signal,
    ...(idempotency ? { idempotency } : {}),
    async: prefersAsync(c.req.header('prefer')),
    onQueued: (queued) => c.set('queuedSend', queued),
  };
}

export function queuedAnswer(): MiddlewareHandler<AppEnv> {
  return async function queuedAnswerMiddleware(c, next) {
    await next();
    const queued = c.get('queuedSend');
    if (!queued || c.error) return;
    c.res = new Response(JSON.stringify({ ok: true, messageId: queued.messageId, status: 'queued', notBefore: queued.notBefore }), {
      status: 202,
      headers: { 'content-type': 'application/json', 'preference-applied': 'respond-async' },
    });
  };
}
