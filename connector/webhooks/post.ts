import { Agent, request } from 'undici';
import type { TargetPolicy } from '../../core/net/address-policy.js';
import { FORBIDDEN_TARGET_MESSAGE, ForbiddenTargetError, checkTargetUrl, guardedLookup } from '../../core/net/webhook-target.js';
import { signatureHeaders } from './signature.js';

const WEBHOOK_USER_AGENT = 'wa-gateway-webhooks/1.0';

/** `permanent`: retrying cannot help (the target is refused by policy): dead-letter at once. */
export type PostOutcome = { ok: true; status: number } | { ok: false; reason: string; permanent?: true };

/**
 * One connection pool per policy, whose sockets connect only to addresses the policy allows:
 * the name is resolved and checked in the socket's own lookup (webhook-target.ts).
 */
const agents = new Map<boolean, Agent>();
function agentFor(policy: TargetPolicy): Agent {
  let agent = agents.get(policy.allowPrivate);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(policy) } });
    agents.set(policy.allowPrivate, agent);
  }
  return agent;
}

const forbidden = (detail: string): PostOutcome => ({ ok: false, reason: `${FORBIDDEN_TARGET_MESSAGE} (${detail})`, permanent: true });

/**
 * POSTs one event to one URL: `rawBody` is the JSON text sent as is (a signature covers exactly
 * these bytes), signed with the webhook's `secret` when it has one (signature.ts: ours and
 * Standard Webhooks', timed at this attempt). Success is a 2xx answer within `timeoutMs`; anything else
 * (network error, timeout, redirect, 4xx, 5xx) is a failure the caller retries, except a
 * target the address policy refuses (checked on the URL, then on every address the host
 * resolves to, at connect time): that fails permanently with no request made. Redirects are
 * not followed: a POST turned into a GET would lose the body, and the new target is unchecked.
 */
export async function postWebhook(
  url: string,
  rawBody: string,
  headers: { eventId: string; event: string; attempt: number; secret?: string | undefined },
  timeoutMs: number,
  policy: TargetPolicy = { allowPrivate: false },
): Promise<PostOutcome> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'invalid URL', permanent: true };
  }
  const verdict = checkTargetUrl(parsed, policy);
  if (!verdict.allowed) return forbidden(verdict.reason);
  try {
    // undici's request, not fetch: no WHATWG streams and no redirect handling (a 3xx is an
    // answer like any other), at a fraction of fetch's CPU per POST.
    const response = await request(parsed, {
      dispatcher: agentFor(policy),
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': WEBHOOK_USER_AGENT,
        'X-Webhook-Id': headers.eventId,
        'X-Webhook-Event': headers.event,
        'X-Webhook-Attempt': String(headers.attempt),
        ...signatureHeaders(headers.eventId, rawBody, headers.secret),
      },
      body: rawBody,
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The answer's body is of no interest; read it off so that the connection is reused.
    await response.body.dump().catch(() => undefined);
    if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true, status: response.statusCode };
    return { ok: false, reason: `HTTP ${response.statusCode}` };
  } catch (error) {
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
      return { ok: false, reason: `timeout after ${timeoutMs} ms` };
    }
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    if (cause instanceof ForbiddenTargetError) return forbidden(cause.message);
    const code = (cause as { code?: unknown } | undefined)?.code;
    return { ok: false, reason: typeof code === 'string' ? code : cause instanceof Error ? cause.message : 'network error' };
  }
}

/** Scheme, host and port only: a webhook URL's path or query may hold a secret token. */
export function urlForLogs(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid-url';
  }
}
