import { BlockList, isIP, SocketAddress } from 'node:net';

/**
 * Which network addresses the gateway may send webhooks to (server-side request forgery guard).
 *
 * - `forbidden`, always: cloud metadata and link-local, unspecified, multicast, broadcast and
 *   reserved addresses. No receiver lives there; an attacker's URL might.
 * - `private`: loopback and private ranges, allowed only by WEBHOOK_ALLOW_PRIVATE=true (a
 *   receiver on the same machine or network).
 * - `public`: everything else.
 *
 * IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged
 * by that IPv4 address, so `[::ffff:169.254.169.254]` is the metadata service it names.
 */
export type AddressClass = 'public' | 'private' | 'forbidden';

export interface TargetPolicy {
  allowPrivate: boolean;
}

type Range = readonly [network: string, prefix: number, what: string];

const FORBIDDEN_V4: Range[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  // Alibaba Cloud's metadata service sits inside the CGNAT range, which is only private.
  ['100.100.100.200', 32, 'cloud metadata'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved or broadcast'],
];
const PRIVATE_V4: Range[] = [
  ['127.0.0.0', 8, 'loopback'],
  ['10.0.0.0', 8, 'private'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['198.18.0.0', 15, 'benchmarking'],
];
const FORBIDDEN_V6: Range[] = [
  ['::', 128, 'unspecified'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
  // AWS's IMDS over IPv6: inside fc00::/7, which would otherwise only be private.
  ['fd00:ec2::254', 128, 'cloud metadata'],
];
const PRIVATE_V6: Range[] = [
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique local'],
];

/** Host names of metadata services, refused whatever they resolve to. */
const FORBIDDEN_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data.ec2.internal']);

interface CompiledRange {
  list: BlockList;
  what: string;
}

function compile(ranges: Range[], family: 'ipv4' | 'ipv6'): CompiledRange[] {
  return ranges.map(([network, prefix, what]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { list, what };
  });
}

const V4 = { forbidden: compile(FORBIDDEN_V4, 'ipv4'), private: compile(PRIVATE_V4, 'ipv4') };
const V6 = { forbidden: compile(FORBIDDEN_V6, 'ipv6'), private: compile(PRIVATE_V6, 'ipv6') };

export interface Classified {
  class: AddressClass;
  /** The range's name, for logs and dead-letter reasons (`loopback`, `link-local`...). */
  what: string;
}

/** Classifies an IP address (v4 or v6, no brackets); a string that is no IP address is forbidden. */
export function classifyAddress(address: string): Classified {
  const ip = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(ip);
  if (family === 4) return classifyIn(ip, 'ipv4');
  if (family === 6) {
    const embedded = embeddedIpv4(ip);
    return embedded ? classifyIn(embedded, 'ipv4') : classifyIn(ip, 'ipv6');
  }
  return { class: 'forbidden', what: 'not an IP address' };
}

function classifyIn(ip: string, family: 'ipv4' | 'ipv6'): Classified {
  const tables = family === 'ipv4' ? V4 : V6;
  // Parsed once for all the ranges (a string is parsed again by every check): this runs for
  // every webhook POST.
  const address = new SocketAddress({ address: ip, family });
  const forbidden = tables.forbidden.find((r) => r.list.check(address));
  if (forbidden) return { class: 'forbidden', what: forbidden.what };
  const privateRange = tables.private.find((r) => r.list.check(address));
  if (privateRange) return { class: 'private', what: privateRange.what };
  return { class: 'public', what: 'public' };
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
export function ipv6Groups(ip: string): number[] | undefined {
  if (isIP(ip) !== 6) return undefined;
  const zoneless = ip.split('%')[0] ?? '';
  const hexOnly = zoneless.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_all, a: string, b: string, c: string, d: string) =>
      `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const [head = '', tail] = hexOnly.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const toIpv4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address stands for, if any: ::ffff:a.b.c.d (mapped), ::a.b.c.d
 * (compatible, deprecated but still routed by some stacks), 64:ff9b::a.b.c.d (NAT64) and
 * 2002:aabb:ccdd:: (6to4). `::` and `::1` are themselves, not IPv4.
 */
export function embeddedIpv4(ip: string): string | undefined {
  const g = ipv6Groups(ip);
  if (!g) return undefined;
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = g;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0xffff) return toIpv4(g6, g7);
  if (zeroPrefix && g5 === 0 && g6 !== 0) return toIpv4(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return toIpv4(g6, g7);
  if (g0 === 0x2002) return toIpv4(g1 ?? 0, g2 ?? 0);
  return undefined;
}

/** Lower case, without the trailing dot of a fully qualified name. */
function normalizeHostName(name: string): string {
  return name.toLowerCase().replace(/\.+$/, '');
}

/** A host name refused by name (metadata services), or `localhost`, which is loopback by definition. */
export function classifyHostName(name: string): Classified | undefined {
  const host = normalizeHostName(name);
  if (FORBIDDEN_NAMES.has(host)) return { class: 'forbidden', what: 'cloud metadata' };
  if (host === 'localhost' || host.endsWith('.localhost')) return { class: 'private', what: 'loopback' };
  return undefined;
}

export function isAllowed(classified: Classified, policy: TargetPolicy): boolean {
  return classified.class === 'public' || (classified.class === 'private' && policy.allowPrivate);
}
