import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { classifyAddress, embeddedIpv4, ipv6Groups, type AddressClass } from '../../../core/net/address-policy.js';
import {
  ForbiddenTargetError,
  checkTargetUrl,
  checkWebhookTarget,
  guardedLookup,
  type LookupAll,
} from '../../../core/net/webhook-target.js';

const closed = { allowPrivate: false };
const open = { allowPrivate: true };

describe('classifyAddress', () => {
  const table: [string, AddressClass][] = [
    // always refused
    ['169.254.169.254', 'forbidden'],
    ['169.254.0.1', 'forbidden'],
    ['100.100.100.200', 'forbidden'],
    ['0.0.0.0', 'forbidden'],
    ['0.1.2.3', 'forbidden'],
    ['224.0.0.1', 'forbidden'],
    ['239.255.255.250', 'forbidden'],
    ['255.255.255.255', 'forbidden'],
    ['240.0.0.1', 'forbidden'],
    ['::', 'forbidden'],
    ['fe80::1', 'forbidden'],
    ['febf::1', 'forbidden'],
    ['ff02::1', 'forbidden'],
    ['fd00:ec2::254', 'forbidden'],
    ['::ffff:169.254.169.254', 'forbidden'],
    ['::ffff:a9fe:a9fe', 'forbidden'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'forbidden'],
    ['::ffff:0.0.0.0', 'forbidden'],
    ['64:ff9b::169.254.169.254', 'forbidden'],
    ['2002:a9fe:a9fe::', 'forbidden'],
    ['not-an-ip', 'forbidden'],
    // private: allowed by WEBHOOK_ALLOW_PRIVATE only
    ['127.0.0.1', 'private'],
    ['127.255.255.254', 'private'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['::1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:127.0.0.1', 'private'],
    ['::ffff:7f00:1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['::127.0.0.1', 'private'],
    ['[::1]', 'private'],
    // public
    ['8.8.8.8', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.1', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.1', 'public'],
    ['169.253.255.255', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ];
  it.each(table)('%s is %s', (address, expected) => {
    expect(classifyAddress(address).class).toBe(expected);
  });

  it('names the range it matched', () => {
    expect(classifyAddress('169.254.169.254').what).toMatch(/metadata/);
    expect(classifyAddress('127.0.0.1').what).toBe('loopback');
    expect(classifyAddress('fd00:ec2::254').what).toBe('cloud metadata');
  });
});

describe('IPv6 parsing', () => {
  it('expands :: and a dotted IPv4 tail into eight groups', () => {
    expect(ipv6Groups('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(ipv6Groups('1::8')).toEqual([1, 0, 0, 0, 0, 0, 0, 8]);
    expect(ipv6Groups('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(ipv6Groups('1.2.3.4')).toBeUndefined();
  });

  it('finds the IPv4 address inside mapped, compatible, NAT64 and 6to4 forms only', () => {
    expect(embeddedIpv4('::ffff:a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIpv4('::7f00:1')).toBe('127.0.0.1');
    expect(embeddedIpv4('64:ff9b::a00:1')).toBe('10.0.0.1');
    expect(embeddedIpv4('2002:7f00:1::')).toBe('127.0.0.1');
    expect(embeddedIpv4('::1')).toBeUndefined();
    expect(embeddedIpv4('::')).toBeUndefined();
    expect(embeddedIpv4('2606:4700::1')).toBeUndefined();
  });
});

describe('checkTargetUrl: what new URL() makes of tricky spellings', () => {
  const table: [url: string, hostname: string, closedAllowed: boolean, openAllowed: boolean][] = [
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', false, false],
    ['http://0xa9fea9fe/', '169.254.169.254', false, false],
    ['http://0251.0376.0251.0376/', '169.254.169.254', false, false],
    ['http://2852039166/', '169.254.169.254', false, false],
    ['http://[::ffff:169.254.169.254]/', '[::ffff:a9fe:a9fe]', false, false],
    ['http://[fd00:ec2::254]/', '[fd00:ec2::254]', false, false],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal', false, false],
    ['http://METADATA.GOOGLE.INTERNAL./', 'metadata.google.internal.', false, false],
    ['http://0.0.0.0:9/', '0.0.0.0', false, false],
    ['http://0/', '0.0.0.0', false, false],
    ['http://[::]/', '[::]', false, false],
    ['http://224.0.0.251/', '224.0.0.251', false, false],
    ['http://255.255.255.255/', '255.255.255.255', false, false],
    ['http://2130706433/', '127.0.0.1', false, true],
    ['http://0x7f.1/', '127.0.0.1', false, true],
    ['http://017700000001/', '127.0.0.1', false, true],
    ['http://127.1:8080/', '127.0.0.1', false, true],
    ['http://[::1]:3000/', '[::1]', false, true],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]', false, true],
    ['http://10.0.0.5/hook', '10.0.0.5', false, true],
    ['http://localhost:3000/', 'localhost', false, true],
    ['http://api.localhost/', 'api.localhost', false, true],
    ['https://8.8.8.8/', '8.8.8.8', true, true],
    ['https://hooks.example.com/x', 'hooks.example.com', true, true],
  ];
  it.each(table)('%s (hostname %s): allowed %s, with private allowed %s', (url, hostname, closedAllowed, openAllowed) => {
    const parsed = new URL(url);
    expect(parsed.hostname).toBe(hostname);
    expect(checkTargetUrl(parsed, closed).allowed).toBe(closedAllowed);
    expect(checkTargetUrl(parsed, open).allowed).toBe(openAllowed);
  });

  it('a URL with user:password is refused whatever its host', () => {
    for (const url of ['http://user:pass@hooks.example.com/', 'https://token@8.8.8.8/', 'http://:secret@127.0.0.1/']) {
      expect(checkTargetUrl(new URL(url), open)).toEqual({ allowed: false, reason: 'credentials in the URL' });
    }
  });

  it('a host name is left to its addresses', () => {
    expect(checkTargetUrl(new URL('https://hooks.example.com/'), closed)).toEqual({ allowed: true, resolve: 'hooks.example.com' });
  });
});

/** A resolver answering from a script, one answer per call (a DNS record re-pointed between calls). */
function scriptedLookup(answers: (string[] | NodeJS.ErrnoException)[]): LookupAll & { calls: number } {
  const lookup = Object.assign(
    ((_hostname, _options, callback) => {
      const answer = answers[Math.min(lookup.calls, answers.length - 1)];
      lookup.calls += 1;
      if (answer instanceof Error) return callback(answer, []);
      const addresses: LookupAddress[] = (answer ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      return callback(null, addresses);
    }) as LookupAll,
    { calls: 0 },
  );
  return lookup;
}

const notFound = () => Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });

describe('checkWebhookTarget (registration)', () => {
  it('refuses a name when any of its addresses is refused', async () => {
    const lookup = scriptedLookup([['93.184.215.14', '169.254.169.254']]);
    expect(await checkWebhookTarget('http://rebind.example/', open, lookup)).toEqual({
      allowed: false,
      reason: 'rebind.example resolves to link-local (cloud metadata) address 169.254.169.254',
    });
  });

  it('a name resolving to a private address: refused unless private targets are allowed', async () => {
    expect((await checkWebhookTarget('http://intranet.example/', closed, scriptedLookup([['10.0.0.7']]))).allowed).toBe(false);
    expect((await checkWebhookTarget('http://intranet.example/', open, scriptedLookup([['10.0.0.7']]))).allowed).toBe(true);
    expect((await checkWebhookTarget('http://public.example/', closed, scriptedLookup([['93.184.215.14']]))).allowed).toBe(true);
  });

  it('a name that does not resolve is accepted (every delivery checks again)', async () => {
    expect(await checkWebhookTarget('http://not-yet.example/', closed, scriptedLookup([notFound()]))).toEqual({ allowed: true });
  });

  it('an address or refused name never reaches the resolver', async () => {
    const lookup = scriptedLookup([['93.184.215.14']]);
    expect((await checkWebhookTarget('http://169.254.169.254/', open, lookup)).allowed).toBe(false);
    expect((await checkWebhookTarget('http://metadata.google.internal/', open, lookup)).allowed).toBe(false);
    expect(lookup.calls).toBe(0);
  });
});

describe('guardedLookup (connect time)', () => {
  const resolve = (lookup: ReturnType<typeof guardedLookup>, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((done) =>
      lookup('hook.example', { all }, (error, address) => done({ error, address })),
    );

  it('answers in the form asked for when every address is allowed', async () => {
    const lookup = guardedLookup(closed, scriptedLookup([['93.184.215.14', '2606:2800::1']]));
    expect(await resolve(lookup, true)).toEqual({
      error: null,
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800::1', family: 6 },
      ],
    });
    expect((await resolve(lookup, false)).address).toBe('93.184.215.14');
  });

  it('a name re-pointed at the metadata service after a good answer fails with ForbiddenTargetError', async () => {
    const lookup = guardedLookup(open, scriptedLookup([['127.0.0.1'], ['169.254.169.254']]));
    expect((await resolve(lookup, false)).error).toBeNull();
    const second = await resolve(lookup, false);
    expect(second.error).toBeInstanceOf(ForbiddenTargetError);
    expect(second.error?.message).toBe('hook.example resolves to link-local (cloud metadata) address 169.254.169.254');
  });

  it('a resolution failure is passed on as it is (a retryable network error)', async () => {
    const { error } = await resolve(guardedLookup(closed, scriptedLookup([notFound()])), false);
    expect(error?.code).toBe('ENOTFOUND');
    expect(error).not.toBeInstanceOf(ForbiddenTargetError);
  });
});
