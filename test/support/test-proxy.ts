import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * A proxy for tests, on 127.0.0.1: HTTP CONNECT (`kind: 'http'`), the same over TLS
 * (`kind: 'https'`, with the certificate given in `tls`), or SOCKS5 with the user/password
 * method (`kind: 'socks5'`), optionally demanding credentials. It records every
 * tunnel asked of it, with whether the credentials matched, and relays the bytes of those it
 * opens. What connects through it is real: Baileys' WebSocket, its media uploads, downloads.
 */
interface Tunnel {
  /** `host:port` asked for. */
  target: string;
  /** The credentials matched (true when none are demanded). A SOCKS5 client refused never names its target: `target` is ''. */
  authorized: boolean;
}

export interface TestProxy {
  kind: 'http' | 'https' | 'socks5';
  port: number;
  /** The proxy URL, with the credentials given (`user:pass@` in them, or none). */
  url(credentials?: { user: string; password: string }): string;
  tunnels: Tunnel[];
  close(): Promise<void>;
}

export interface TestProxyOptions {
  kind?: 'http' | 'https' | 'socks5';
  credentials?: { user: string; password: string };
  /** The certificate and key of an `https` proxy (for 127.0.0.1). */
  tls?: { certPem: string; keyPem: string };
}

export async function startTestProxy(options: TestProxyOptions = {}): Promise<TestProxy> {
  const kind = options.kind ?? 'http';
  const tunnels: Tunnel[] = [];
  const open = new Set<Duplex>();
  const track = (socket: Duplex) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  if (kind === 'https' && !options.tls) throw new Error('an https test proxy needs its tls material');
  const server =
    kind === 'socks5' ? socksProxy(options.credentials, tunnels, track) : connectProxy(options.credentials, tunnels, track, options.tls);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const scheme = kind;
  return {
    kind,
    port,
    url: (credentials) =>
      credentials
        ? `${scheme}://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}`
        : `${scheme}://127.0.0.1:${port}`,
    tunnels,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Relays between a client and its target until either side ends. */
function relay(client: Duplex, upstream: Socket, track: (socket: Duplex) => void): void {
  track(upstream);
  client.pipe(upstream).pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.once('error', end).once('close', end);
  upstream.once('error', end).once('close', end);
}

function basicMatches(header: string | undefined, credentials: { user: string; password: string }): boolean {
  const expected = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;
  return header === expected;
}

function connectProxy(
  credentials: TestProxyOptions['credentials'],
  tunnels: Tunnel[],
  track: (socket: Duplex) => void,
  tls?: TestProxyOptions['tls'],
): Server {
  const refuse = (_req: IncomingMessage, res: { writeHead(status: number): { end(text: string): void } }) => {
    res.writeHead(405).end('CONNECT only');
  };
  const server = tls ? createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, refuse) : createHttpServer(refuse);
  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    const target = req.url ?? '';
    const authorized = !credentials || basicMatches(req.headers['proxy-authorization'], credentials);
    tunnels.push({ target, authorized });
    client.on('error', () => client.destroy());
    if (!authorized) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const { hostname, port } = new URL(`http://${target}`);
    const upstream = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      relay(client, upstream, track);
    });
    upstream.once('error', () => {
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
    });
  });
  return server;
}

/** Reads exact byte counts off a socket, in order, keeping what came early. */
function byteReader(socket: Socket) {
  let buffered = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiting?.();
  };
  socket.on('data', onData);
  return {
    async read(count: number): Promise<Buffer> {
      while (buffered.length < count) {
        if (socket.destroyed || socket.readableEnded) throw new Error('closed');
        await new Promise<void>((resolve) => {
          waiting = resolve;
          socket.once('close', resolve);
        });
        waiting = undefined;
      }
      const out = buffered.subarray(0, count);
      buffered = buffered.subarray(count);
      return out;
    },
    /** Stops reading; what came after the handshake goes to the target. */
    detach(): Buffer {
      socket.off('data', onData);
      return buffered;
    },
  };
}

const SOCKS_VERSION = 5;
const NO_AUTH = 0x00;
const USER_PASSWORD = 0x02;
const NO_ACCEPTABLE = 0xff;

/** RFC 1928 (CONNECT only) with RFC 1929's user/password method. */
function socksProxy(credentials: TestProxyOptions['credentials'], tunnels: Tunnel[], track: (socket: Duplex) => void): Server {
  return createNetServer((client) => {
    track(client);
    client.on('error', () => client.destroy());
    void socksHandshake(client, credentials, tunnels, track).catch(() => client.destroy());
  });
}

async function socksHandshake(
  client: Socket,
  credentials: TestProxyOptions['credentials'],
  tunnels: Tunnel[],
  track: (socket: Duplex) => void,
): Promise<void> {
  const reader = byteReader(client);
  const [version = 0, methodCount = 0] = await reader.read(2);
  if (version !== SOCKS_VERSION) throw new Error('not SOCKS5');
  const methods = [...(await reader.read(methodCount))];
  const method = credentials ? USER_PASSWORD : NO_AUTH;
  if (!methods.includes(method)) {
    client.end(Buffer.from([SOCKS_VERSION, NO_ACCEPTABLE]));
    return;
  }
  client.write(Buffer.from([SOCKS_VERSION, method]));
  if (credentials) {
    const [, userLength = 0] = await reader.read(2);
    const user = (await reader.read(userLength)).toString();
    const [passwordLength = 0] = await reader.read(1);
    const password = (await reader.read(passwordLength)).toString();
    // Answered before the client names its target: a refused one is recorded without it.
    if (user !== credentials.user || password !== credentials.password) {
      tunnels.push({ target: '', authorized: false });
      client.end(Buffer.from([1, 1]));
      return;
    }
    client.write(Buffer.from([1, 0]));
  }
  const [, command = 0, , addressType = 0] = await reader.read(4);
  let host: string;
  if (addressType === 1) host = [...(await reader.read(4))].join('.');
  else if (addressType === 3) host = (await reader.read((await reader.read(1))[0] ?? 0)).toString();
  else host = `[${((await reader.read(16)).toString('hex').match(/.{4}/g) ?? []).join(':')}]`;
  const port = (await reader.read(2)).readUInt16BE(0);
  tunnels.push({ target: `${host}:${port}`, authorized: true });
  if (command !== 1) {
    client.end(Buffer.from([SOCKS_VERSION, 7, 0, 1, 0, 0, 0, 0, 0, 0]));
    return;
  }
  const upstream = connect(port, host.replace(/^\[|\]$/g, ''));
  upstream.once('connect', () => {
    client.write(Buffer.from([SOCKS_VERSION, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
    const early = reader.detach();
    if (early.length > 0) upstream.write(early);
    relay(client, upstream, track);
  });
  upstream.once('error', () => client.end(Buffer.from([SOCKS_VERSION, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
}
