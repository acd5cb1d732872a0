import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of the SQS emulator, for a connector process pointed at it
 * (AWS_ENDPOINT_URL_SQS): everything passes, except the sends to one queue (SendMessage,
 * SendMessageBatch) carrying an event that `hold` picks: those are held unanswered. A connector
 * killed while its enqueue of a webhook event is held dies at the worst moment for that event:
 * after the row change the event announces, before the event is in the queue. `held` lists the
 * event ids of the held sends, `passed` those of the sends let through (with straight delivery
 * (connector/webhooks/straight-delivery.ts), only retries and events whose first attempt could
 * not be made).
 */
export interface SqsGate {
  url: string;
  hold: (eventId: string) => boolean;
  readonly held: Set<string>;
  readonly passed: string[];
  close(): Promise<void>;
}

export async function startSqsGate(upstream: string, queueName: string): Promise<SqsGate> {
  const target = new URL(upstream);
  const gate = { hold: (_eventId: string) => false, held: new Set<string>(), passed: [] as string[] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const ids = isSendTo(req, body, queueName) ? eventIdsOf(body) : [];
      if (ids.some((id) => gate.hold(id))) {
        for (const id of ids) gate.held.add(id);
        // Never answered: the client waits until its process dies.
        return;
      }
      gate.passed.push(...ids);
      const forwarded = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => res.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(gate, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

function isSendTo(req: IncomingMessage, body: Buffer, queueName: string): boolean {
  const action = String(req.headers['x-amz-target'] ?? '');
  if (action !== 'AmazonSQS.SendMessage' && action !== 'AmazonSQS.SendMessageBatch') return false;
  const queueUrl = String((JSON.parse(body.toString('utf8')) as { QueueUrl?: unknown }).QueueUrl ?? '');
  return queueUrl.endsWith(`/${queueName}`);
}

function eventIdsOf(body: Buffer): string[] {
  const input = JSON.parse(body.toString('utf8')) as { MessageBody?: string; Entries?: Array<{ MessageBody?: string }> };
  const bodies = input.Entries ? input.Entries.map((entry) => entry.MessageBody) : [input.MessageBody];
  return bodies.flatMap((text) => {
    const eventId = (JSON.parse(text ?? '{}') as { eventId?: unknown }).eventId;
    return typeof eventId === 'string' ? [eventId] : [];
  });
}
