import { createHmac } from 'node:crypto';

/**
 * The signature headers of one POST attempt (docs/webhooks.md), two conventions over the same
 * moment:
 * - ours, Stripe-style: `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
 *   "<t>.<raw body>")>`;
 * - Standard Webhooks' (standardwebhooks.com), which receivers verify with a library in their
 *   language (`standardwebhooks`, `svix`): `webhook-id` (the event's id, the same on every retry
 *   and replay), `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256(key,
 *   "<id>.<timestamp>.<raw body>")>`. Its key is the decoded bytes of a `whsec_<base64>` secret
 *   (what those libraries take as is), else the secret's UTF-8 bytes (they verify it given
 *   `whsec_` + the secret in base64).
 * Without a secret only the id and the timestamp go out. A receiver rejects an old timestamp
 * (a replayed request).
 */
export function signatureHeaders(eventId: string, rawBody: string, secret: string | undefined, nowMs = Date.now()): Record<string, string> {
  const t = Math.floor(nowMs / 1000);
  const headers: Record<string, string> = { 'webhook-id': eventId, 'webhook-timestamp': String(t) };
  if (secret === undefined) return headers;
  headers['X-Webhook-Signature'] = `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex')}`;
  headers['webhook-signature'] = `v1,${createHmac('sha256', standardKey(secret)).update(`${eventId}.${t}.${rawBody}`).digest('base64')}`;
  return headers;
}

const STANDARD_SECRET_PREFIX = 'whsec_';

function standardKey(secret: string): Buffer {
  return secret.startsWith(STANDARD_SECRET_PREFIX)
    ? Buffer.from(secret.slice(STANDARD_SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}
