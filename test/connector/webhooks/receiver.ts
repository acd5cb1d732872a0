import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';

export interface ReceivedPost {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** The body as received, for signature checks. */
  raw: string;
}

/** How the receiver answers a POST (number = status), decided per request. */
export type Answer = (post: ReceivedPost, countForId: number) => number | Promise<number>;

/**
 * A webhook receiver on 127.0.0.1: records every POST, answers with `answer`, and can go down
 * and come back up on the same port. While down, the port resets every connection (the client
 * sees a network error, as with a crashed receiver) and counts them in `refused`.
 */
export class Receiver {
  readonly posts: ReceivedPost[] = [];
  private server: Server | undefined;
  private downListener: TcpServer | undefined;
  private port = 0;
  refused = 0;
  private waiters: Array<() => void> = [];

  constructor(private answer: Answer = () => 200) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  setAnswer(answer: Answer): void {
    this.answer = answer;
  }

  async up(): Promise<void> {
    await this.closeDownListener();
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const post: ReceivedPost = { path: req.url ?? '', headers: req.headers, body: JSON.parse(raw), raw };
        this.posts.push(post);
        const id = String(req.headers['x-webhook-id']);
        void Promise.resolve(this.answer(post, this.countFor(id))).then((status) => {
          res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
          this.wake();
        });
      });
    });
    await listen(server, this.port);
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops answering: the port now resets every connection. */
  async down(): Promise<void> {
    await this.closeHttp();
    const listener = createTcpServer((socket) => {
      this.refused += 1;
      socket.resetAndDestroy();
      this.wake();
    });
    await listen(listener, this.port);
    this.downListener = listener;
  }

  /** Frees the port. */
  async close(): Promise<void> {
    await this.closeHttp();
    await this.closeDownListener();
  }

  private async closeHttp(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async closeDownListener(): Promise<void> {
    const listener = this.downListener;
    this.downListener = undefined;
    if (listener) await new Promise<void>((resolve) => listener.close(() => resolve()));
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  countFor(eventId: string): number {
    return this.posts.filter((p) => p.headers['x-webhook-id'] === eventId).length;
  }

  /** Resolves once `predicate` holds over the receiver (its posts, refusals), or rejects after `timeoutMs`. */
  async waitFor(predicate: (posts: ReceivedPost[], receiver: Receiver) => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.posts, this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${this.posts.length} posts)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

function listen(server: Server | TcpServer, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
