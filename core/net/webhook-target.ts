import { lookup as systemLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { classifyAddress, classifyHostName, isAllowed, type TargetPolicy } from './address-policy.js';

/**
 * Whether a webhook URL may be called, checked at registration and again at every delivery
 * (connect time), against the address policy (address-policy.ts).
 */
export type TargetVerdict = { allowed: true } | { allowed: false; reason: string };

/** What the URL alone decides: refused, allowed (an IP address), or up to its host's addresses. */
export type UrlVerdict = TargetVerdict & { resolve?: string };

/** What the API answers for a refused registration, and what a refused delivery records. */
export const FORBIDDEN_TARGET_MESSAGE = 'url targets a forbidden address';

/** A connection refused by the policy. `code` lets callers tell it from network errors. */
export class ForbiddenTargetError extends Error {
  override name = 'ForbiddenTargetError';
  readonly code = 'ERR_FORBIDDEN_TARGET';
}

const refused = (reason: string): TargetVerdict => ({ allowed: false, reason });

/** Brackets of an IPv6 literal removed (`new URL` keeps them in `hostname`). */
function bareHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Checks what the URL itself says: the scheme, credentials (a URL with user:password is never
 * called: the credentials would go to whoever the host is, and our POST does not send them),
 * an IP address host (WHATWG parsing has already turned `2130706433`, `0x7f.1` and `0177.0.0.1`
 * into dotted form), or a host name refused by name. A name that passes is resolved by the caller.
 */
export function checkTargetUrl(url: URL, policy: TargetPolicy): UrlVerdict {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refused('not an http or https URL');
  if (url.username !== '' || url.password !== '') return refused('credentials in the URL');
  return checkTargetHost(url, policy);
}

/**
 * The host part of the URL check, for any scheme: an IP address host is allowed or refused
 * here, a host name refused by name, or left to be resolved (`resolve`). A proxy's URL
 * (proxy-target.ts) is checked by it too, its scheme and credentials being its own.
 */
export function checkTargetHost(url: URL, policy: TargetPolicy): UrlVerdict {
  const host = bareHost(url);
  if (isIP(host)) {
    const classified = classifyAddress(host);
    return isAllowed(classified, policy) ? { allowed: true } : refused(`${classified.what} address ${host}`);
  }
  const byName = classifyHostName(host);
  if (byName && !isAllowed(byName, policy)) return refused(`${byName.what} host ${host}`);
  return { allowed: true, resolve: host };
}

/** Every address a name resolves to must be allowed: one bad answer refuses the name. */
function checkResolvedAddresses(host: string, addresses: string[], policy: TargetPolicy): TargetVerdict {
  for (const address of addresses) {
    const classified = classifyAddress(address);
    if (!isAllowed(classified, policy)) return refused(`${host} resolves to ${classified.what} address ${address}`);
  }
  return { allowed: true };
}

/** dns.lookup's callback form with `all: true` (the one the checks need). */
export type LookupAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const lookupAllDefault: LookupAll = (hostname, options, callback) => systemLookup(hostname, options, callback);

/** How long registration waits for a name to resolve before accepting it unresolved. */
const REGISTRATION_LOOKUP_TIMEOUT_MS = 5_000;

/**
 * The registration check. A name that does not resolve (or not in time) is accepted: it can
 * reach nothing now, the receiver's DNS record may come later, and every delivery checks the
 * addresses it is about to connect to anyway.
 */
export async function checkWebhookTarget(
  url: string,
  policy: TargetPolicy,
  lookupAll: LookupAll = lookupAllDefault,
): Promise<TargetVerdict> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refused('not a valid URL');
  }
  return resolvedVerdict(checkTargetUrl(parsed, policy), policy, lookupAll);
}

/**
 * A URL verdict completed: a host name left to resolve is resolved and every address checked.
 * A name that does not resolve (or not in time) is accepted (see checkWebhookTarget).
 */
export async function resolvedVerdict(
  verdict: UrlVerdict,
  policy: TargetPolicy,
  lookupAll: LookupAll = lookupAllDefault,
): Promise<TargetVerdict> {
  if (!verdict.allowed) return verdict;
  const host = verdict.resolve;
  if (host === undefined) return { allowed: true };
  const addresses = await new Promise<string[] | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), REGISTRATION_LOOKUP_TIMEOUT_MS);
    lookupAll(host, { all: true }, (error, found) => {
      clearTimeout(timer);
      resolve(error ? undefined : found.map((a) => a.address));
    });
  });
  return addresses ? checkResolvedAddresses(host, addresses, policy) : { allowed: true };
}

/** net.connect's `lookup` option, in both the single-address and the `all` form. */
export type ConnectLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * A `lookup` for the sockets that deliver webhooks: it resolves the name and checks every
 * address before the socket connects, so the address connected to is the address checked (a
 * name re-pointed at a forbidden address between two deliveries, or between a check and the
 * connect, fails with ForbiddenTargetError instead of connecting).
 */
export function guardedLookup(policy: TargetPolicy, lookupAll: LookupAll = lookupAllDefault): ConnectLookup {
  return (hostname, options, callback) => {
    lookupAll(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const verdict = checkResolvedAddresses(
        hostname,
        addresses.map((a) => a.address),
        policy,
      );
      if (!verdict.allowed) return callback(new ForbiddenTargetError(verdict.reason), []);
      const [first] = addresses;
      if (options.all) return callback(null, addresses);
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  };
}
