import type { TargetPolicy } from './address-policy.js';
import { checkTargetHost, resolvedVerdict, type LookupAll, type TargetVerdict } from './webhook-target.js';

/** What the API answers for a proxy whose host is refused. */
export const FORBIDDEN_PROXY_MESSAGE = 'proxy.url targets a forbidden address';

/**
 * Whether an account's proxy may be connected to: its host is checked like a webhook target's
 * (the same address policy, WEBHOOK_ALLOW_PRIVATE included, and every address a name resolves to),
 * so that a proxy setting cannot reach the metadata service or, unless allowed, a private
 * network. The scheme and `user:pass@` were checked by the settings schema (core/schemas/settings.ts);
 * unlike a webhook URL, a proxy's credentials are meant to be sent to it.
 */
export async function checkProxyTarget(url: string, policy: TargetPolicy, lookupAll?: LookupAll): Promise<TargetVerdict> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { allowed: false, reason: 'not a valid URL' };
  }
  return resolvedVerdict(checkTargetHost(parsed, policy), policy, lookupAll);
}
