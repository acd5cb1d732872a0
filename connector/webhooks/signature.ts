import { createHmac } from 'node:crypto';

/**
 * The X-Webhook-Signature of a POST (docs/webhooks.md), Stripe-style:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. The receiver recomputes it
 * over the bytes it received and rejects an old `t` (replayed requests).
 */
export function webhookSignature(secret: string, rawBody: string, nowMs = Date.now()): string {
  const t = Math.floor(nowMs / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex');
  return `t=${t},v1=${v1}`;
}
