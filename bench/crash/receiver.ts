/**
 * The webhook receiver of the crash bench, on 127.0.0.1: records every inbound-message POST it
 * accepts (2xx), and can go down for an outage, either refusing connections (the port is
 * closed) or answering 503, then come back on the same URL.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

export interface Delivery {
  /** X-Webhook-Id when sent (stable per event), else `<accountId>:<messageId>`. */
  key: string;
  messageId: string;
  /** performance.now() when the POST was answered. */
  at: number;
}

type OutageMode = 'refused' | '503';

export interface CrashReceiver {
  url: string;
  /** Inbound-message POSTs answered 200, in arrival order (duplicates included). */
  deliveries: Delivery[];
  /** POSTs answered 503 during an outage. */
  rejectedPosts: number;
  goDown(mode: OutageMode): Promise<void>;
  comeUp(): Promise<void>;
  stop(): Promise<void>;
}

const messageEvent = z.object({
  messageId: z.string(),
  accountId: z.string(),
  fromMe: z.boolean().optional(),
  event: z.string().optional(),
});

/** What the gateway posts for an inbound message (other events and own messages are ignored). */
function inboundMessageOf(req: IncomingMessage, text: string): Omit<Delivery, 'at'> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = messageEvent.safeParse(json);
  if (!parsed.success) return undefined;
  const { messageId, accountId, fromMe, event } = parsed.data;
  if (fromMe === true || (event !== undefined && event !== 'message')) return undefined;
  const header = req.headers['x-webhook-id'];
  return { key: typeof header === 'string' ? header : `${accountId}:${messageId}`, messageId };
}

export async function startCrashReceiver(): Promise<CrashReceiver> {
  let answer503 = false;
  const receiver: CrashReceiver = {
    url: '',
    deliveries: [],
    rejectedPosts: 0,
    goDown: async () => undefined,
    comeUp: async () => undefined,
    stop: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (answer503) {
        receiver.rejectedPosts++;
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"ok":false}');
        return;
      }
      const message = inboundMessageOf(req, Buffer.concat(chunks).toString('utf8'));
      if (message) receiver.deliveries.push({ ...message, at: performance.now() });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });

  await listen(0);
  const { port } = server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}/hook`;
  let closed = false;
  receiver.goDown = async (mode) => {
    if (mode === '503') answer503 = true;
    else {
      closed = true;
      await close();
    }
  };
  receiver.comeUp = async () => {
    answer503 = false;
    if (closed) {
      await listen(port);
      closed = false;
    }
  };
  receiver.stop = async () => {
    if (!closed) await close();
    closed = true;
  };
  return receiver;
}

/** Distinct message ids accepted, and accepted POSTs beyond the first per event key. */
export function deliverySummary(deliveries: readonly Delivery[], among?: ReadonlySet<string>) {
  const relevant = among ? deliveries.filter((d) => among.has(d.messageId)) : deliveries;
  const keys = new Set(relevant.map((d) => d.key));
  return { messageIds: new Set(relevant.map((d) => d.messageId)), duplicates: relevant.length - keys.size };
}
