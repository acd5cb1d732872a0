import type { ClientRequest } from 'node:http';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { Agent as UndiciAgent, buildConnector, ProxyAgent, Socks5ProxyAgent } from 'undici';
import type { TargetPolicy } from '../../core/net/address-policy.js';
import { checkTargetHost, ForbiddenTargetError, guardedLookup, type ConnectLookup, type LookupAll } from '../../core/net/webhook-target.js';
import type { FetchDispatcher, NetworkOptions } from './network-options.js';

/**
 * Why a connection through the account's proxy failed, as the account's status reports it
 * (docs/sending.md, "Proxy"): the proxy refused its credentials (HTTP 407, or the SOCKS5
 * user/password step failed), its address is forbidden by the address policy at connect time
 * (a name re-pointed at the metadata service after the PATCH checked it), or anything else (not
 * reachable, a tunnel refused with another status).
 */
export type ProxyFailure = 'proxy_auth_failed' | 'proxy_forbidden' | 'proxy_failed';

/** A connection through the account's proxy failed; `failure` says how. */
class ProxyError extends Error {
  override name = 'ProxyError';
  readonly code = 'ERR_PROXY';
  constructor(
    readonly failure: ProxyFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

type ProxiedAgent = TunnelAgent | SocksAgent;

/** The agents of one socket of an account with a proxy. */
export interface AccountProxy {
  /** Baileys' `agent`: the WebSocket to WhatsApp. */
  agent: ProxiedAgent;
  /** Baileys' `fetchAgent`: media uploads. */
  fetchAgent: ProxiedAgent;
  /** The fetch dispatcher of media downloads. */
  downloadDispatcher: FetchDispatcher;
  /** How the WebSocket's last connection through the proxy failed, if it did. */
  failure(): ProxyFailure | undefined;
  /** Closes the agents' idle connections. */
  close(): void;
}

export interface ProxyOptions {
  policy: TargetPolicy;
  /**
   * The CA the media host's certificate is checked against through the tunnel, and an https://
   * proxy's own certificate (the sandbox's, against which the suites' proxy is certified);
   * undefined: the default store.
   */
  ca?: string;
  /** Resolves the proxy's host name; tests point a name anywhere with it. */
  lookupAll?: LookupAll;
}

/** How our refusal of the proxy's address begins: the `socks` package passes on only an error's message. */
const REFUSED = 'proxy address refused:';

/** Where a failure came from, in the words of the libraries: the `socks` package names its authentication step. */
function failureOf(error: unknown): ProxyFailure {
  if (error instanceof ProxyError) return error.failure;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === 'ERR_FORBIDDEN_TARGET' || (typeof message === 'string' && message.includes(REFUSED))) return 'proxy_forbidden';
  if (typeof message === 'string' && /authentication/i.test(message)) return 'proxy_auth_failed';
  return 'proxy_failed';
}

/** The error a failed proxy connection ends with: what the library said, as the cause, under our message. */
function proxyError(error: unknown): ProxyError {
  if (error instanceof ProxyError) return error;
  const failure = failureOf(error);
  const said = error instanceof Error ? error.message : String(error);
  return new ProxyError(failure, `proxy connection failed (${failure}): ${said}`, { cause: error });
}

/**
 * The guarded lookup, keeping its refusal: the `socks` package reports a failed connection to
 * the proxy by its message alone, without the error's code.
 */
function noteRefusals(lookup: ConnectLookup): ConnectLookup {
  return (hostname, options, callback) =>
    lookup(hostname, options, (error, address, family) => {
      if (error instanceof ForbiddenTargetError) return callback(new ProxyError('proxy_forbidden', `${REFUSED} ${error.message}`), []);
      return callback(error, address, family);
    });
}

/**
 * The proxy host checked by the URL alone: an IP address is never resolved (`lookup` is not
 * called for it), so its class is decided here; a name is left to the guarded lookup.
 */
function refusalOf(url: URL, policy: TargetPolicy): ProxyError | undefined {
  const verdict = checkTargetHost(url, policy);
  return verdict.allowed ? undefined : new ProxyError('proxy_forbidden', `${REFUSED} ${verdict.reason}`);
}

type ConnectOpts = Parameters<HttpsProxyAgent<string>['connect']>[1];
type ConnectResult = ReturnType<HttpsProxyAgent<string>['connect']>;
interface AgentSide {
  ca?: string;
  refused: ProxyError | undefined;
  onFailure: (failure: ProxyFailure) => void;
}

/**
 * A CONNECT agent that fails the request when the tunnel is refused. https-proxy-agent answers a
 * refused CONNECT with a socket replaying the proxy's answer to the request; `ws` then sees a 407
 * "upgrade response", which Baileys does not act on, and the socket would only close at its
 * connect timeout, reported as a timeout. An error says at once what happened.
 */
class TunnelAgent extends HttpsProxyAgent<string> {
  constructor(
    url: string,
    private readonly extra: AgentSide,
    lookup: ConnectLookup,
  ) {
    // These options also open the connection to an https:// proxy (TLS, checked against `ca`).
    super(url, { lookup, keepAlive: false, ...(extra.ca ? { ca: extra.ca } : {}) });
  }

  override async connect(req: ClientRequest, opts: ConnectOpts): ConnectResult {
    const { ca, refused, onFailure } = this.extra;
    try {
      if (refused) throw refused;
      let status: number | undefined;
      req.once('proxyConnect', (answer: { statusCode?: number }) => {
        status = answer.statusCode;
      });
      const socket = await super.connect(req, { ...opts, ...(ca ? { ca } : {}) });
      if (status === 200) return socket;
      socket.destroy();
      throw new ProxyError(status === 407 ? 'proxy_auth_failed' : 'proxy_failed', `the proxy refused the tunnel with HTTP ${status}`);
    } catch (error) {
      const failed = proxyError(error);
      onFailure(failed.failure);
      throw failed;
    }
  }
}

/** The SOCKS5 agent, with the same failure reporting. */
class SocksAgent extends SocksProxyAgent {
  constructor(
    url: string,
    private readonly extra: AgentSide,
    lookup: ConnectLookup,
  ) {
    super(url, { socketOptions: { lookup } });
  }

  override async connect(req: ClientRequest, opts: Parameters<SocksProxyAgent['connect']>[1]): ReturnType<SocksProxyAgent['connect']> {
    const { ca, refused, onFailure } = this.extra;
    try {
      if (refused) throw refused;
      return await super.connect(req, { ...opts, ...(ca ? { ca } : {}) });
    } catch (error) {
      const failed = proxyError(error);
      onFailure(failed.failure);
      throw failed;
    }
  }
}

/**
 * The agents that take one socket of an account, and its media, through `proxyUrl`
 * (http://, https:// or socks5://, credentials in the URL). The proxy's address is checked at
 * every connection like a webhook target's (core/net/): an IP address by the URL, a name by a
 * lookup that refuses it when any address it resolves to is forbidden, and hands the connection
 * the address it checked.
 */
export function accountProxy(proxyUrl: string, options: ProxyOptions): AccountProxy {
  const url = new URL(proxyUrl);
  const { policy, ca } = options;
  const refused = refusalOf(url, policy);
  const lookup = noteRefusals(guardedLookup(policy, options.lookupAll));
  let lastFailure: ProxyFailure | undefined;
  const socketSide: AgentSide = {
    ...(ca ? { ca } : {}),
    refused,
    onFailure: (failure) => {
      lastFailure = failure;
    },
  };
  const mediaSide: AgentSide = { ...(ca ? { ca } : {}), refused, onFailure: () => undefined };
  const socks = url.protocol === 'socks5:';
  const make = (side: AgentSide) => (socks ? new SocksAgent(proxyUrl, side, lookup) : new TunnelAgent(proxyUrl, side, lookup));
  const agent = make(socketSide);
  const fetchAgent = make(mediaSide);
  const downloadDispatcher = downloadsThrough(url, proxyUrl, { ca, lookup, refused });
  return {
    agent,
    fetchAgent,
    downloadDispatcher,
    failure: () => lastFailure,
    close: () => {
      agent.destroy();
      fetchAgent.destroy();
      void downloadDispatcher.close().catch(() => undefined);
    },
  };
}

/**
 * Baileys downloads with the global fetch, so downloads take an undici dispatcher: undici's own
 * proxy agents, connecting to the proxy through the same guarded lookup.
 */
function downloadsThrough(
  url: URL,
  proxyUrl: string,
  { ca, lookup, refused }: { ca: string | undefined; lookup: ConnectLookup; refused: ProxyError | undefined },
): FetchDispatcher {
  const requestTls = ca ? { ca } : undefined;
  let dispatcher: unknown;
  if (refused) {
    dispatcher = new UndiciAgent({ connect: (_options, callback) => callback(refused, null) });
  } else if (url.protocol === 'socks5:') {
    dispatcher = new Socks5ProxyAgent(proxyUrl, { ...(requestTls ? { requestTls } : {}), connect: buildConnector({ lookup }) });
  } else {
    // `proxyTls` reaches the connection to an http:// proxy too: undici spreads it into net.connect.
    dispatcher = new ProxyAgent({ uri: proxyUrl, ...(requestTls ? { requestTls } : {}), proxyTls: { lookup, ...(ca ? { ca } : {}) } });
  }
  // undici's dispatchers and Node's bundled undici-types differ in their FormData types (see network-options.ts).
  return dispatcher as FetchDispatcher;
}

/**
 * The network options of one socket of an account: `network` itself without a proxy, else the
 * WebSocket, uploads and downloads through the proxy's agents (closed with `proxy.close()` once
 * the socket is done).
 */
export function networkThrough(network: NetworkOptions, proxyUrl: string | undefined): { network: NetworkOptions; proxy?: AccountProxy } {
  if (proxyUrl === undefined) return { network };
  const proxy = accountProxy(proxyUrl, { policy: network.proxyPolicy, ...(network.mediaCa ? { ca: network.mediaCa } : {}) });
  return {
    network: {
      ...network,
      socket: { ...network.socket, agent: proxy.agent, fetchAgent: proxy.fetchAgent },
      downloadDispatcher: proxy.downloadDispatcher,
    },
    proxy,
  };
}
