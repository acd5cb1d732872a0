import type { WebhookPayload } from '../../core/schemas/webhook-event.js';

export const WEBHOOK_USER_AGENT = 'wa-gateway-webhooks/1.0';

export type PostOutcome = { ok: true; status: number } | { ok: false; reason: string };

/**
 * POSTs one event to one URL. Success is a 2xx answer within `timeoutMs`; anything else
 * (network error, timeout, redirect, 4xx, 5xx) is a failure the caller retries. Redirects are
 * not followed: a POST turned into a GET would lose the body.
 */
export async function postWebhook(
  url: string,
  body: WebhookPayload,
  headers: { eventId: string; attempt: number },
  timeoutMs: number,
): Promise<PostOutcome> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': WEBHOOK_USER_AGENT,
        'X-Webhook-Id': headers.eventId,
        'X-Webhook-Attempt': String(headers.attempt),
      },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The answer's body is of no interest; release the connection.
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    return { ok: false, reason: `HTTP ${response.status}` };
  } catch (error) {
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
      return { ok: false, reason: `timeout after ${timeoutMs} ms` };
    }
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
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
