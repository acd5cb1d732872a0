import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';

export interface ReceivedPost {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** The body as received, for signature checks. */
  raw: string;
}

/**
 * How the receiver answers a POST (number = status), decided per request; `countForId` counts the
 * posts of its X-Webhook-Id so far, this one included. A receiver slow on purpose awaits
 * `simulatedDelay` (test/support/wait.ts) before answering.
 */
export type Answer = (post: ReceivedPost, countForId: number) => number | Promise<number>;

/**
 * The webhook receiver of the unit and end-to-end suites, on 127.0.0.1: records every POST in
 * `posts`, answers with `answer` (200 unless told), and can go down and come back up on the same
 * port. While down, the port resets every connection (the client sees a network error, as with a
 * crashed receiver) and counts them in `refused`. `waitFor` waits for a condition over what it got.
 */
export class WebhookReceiver {
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

  /** Starts answering, on the port it had if it was up before (a free one the first time). */
  async up(): Promise<void> {
    await this.closeDownListener();
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const post: ReceivedPost = { path: req.url ?? '', headers: req.headers, body: parseBody(raw), raw };
        this.posts.push(post);
        const id = String(req.headers['x-webhook-id']);
        void Promise.resolve(this.answer(post, this.countFor(id))).then((status) => {
          res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}');
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

  /** The posts of one event (its X-Webhook-Id), retries included. */
  countFor(eventId: string): number {
    return this.posts.filter((p) => p.headers['x-webhook-id'] === eventId).length;
  }

  /** Resolves once `predicate` holds over the receiver (its posts, refusals), or rejects after `timeoutMs`. */
  async waitFor(predicate: (posts: ReceivedPost[], receiver: WebhookReceiver) => boolean, timeoutMs = 30_000): Promise<void> {
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

/** A receiver already up, answering with `answer`. */
export async function startWebhookReceiver(answer?: Answer): Promise<WebhookReceiver> {
  const receiver = new WebhookReceiver(answer);
  await receiver.up();
  return receiver;
}

/** The body as JSON, or kept as text when it is not: a test asserting on it shows what arrived. */
function parseBody(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
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
