import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of the SQS emulator, for a connector process pointed at it
 * (AWS_ENDPOINT_URL_SQS): everything passes, except the sends to one queue (SendMessage,
 * SendMessageBatch) carrying an event that `hold` picks: those are held unanswered. A connector
 * killed while its enqueue of a webhook event is held dies at the worst moment for that event:
 * after the row change the event announces, before the event is in the queue. `held` lists the
 * ids of the events kept out of the queue, `passed` those of the events let through (with
 * straight delivery, connector/webhooks/straight-delivery.ts, only retries and events whose
 * first attempt could not be made).
 *
 * A batch that mixes picked events with others is split: the others go on to the queue and are
 * answered as sent, the picked ones are answered as failed entries (the connector keeps them for
 * a replay: still out of the queue). Holding the whole batch would hold the others' callers too,
 * and with them their account's ordered handling: the connector batches the events of all its
 * accounts together, so a later event of another account would never be sent.
 */
export interface SqsGate {
  url: string;
  hold: (eventId: string) => boolean;
  readonly held: Set<string>;
  readonly passed: string[];
  close(): Promise<void>;
}

interface EventEntry {
  /** The batch entry's Id (undefined for a SendMessage). */
  entryId: string | undefined;
  eventId: string;
}

interface BatchAnswer {
  Successful?: unknown[];
  Failed?: unknown[];
}

export async function startSqsGate(upstream: string, queueName: string): Promise<SqsGate> {
  const target = new URL(upstream);
  const gate = { hold: (_eventId: string) => false, held: new Set<string>(), passed: [] as string[] };

  /** Sends `body` on to the emulator; its answer goes to `res` as is, or to `onAnswer`. */
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, onAnswer?: (status: number, answer: Buffer) => void) => {
    const headers = { ...req.headers, 'content-length': String(body.length) };
    const forwarded = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      if (!onAnswer) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const parts: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => parts.push(chunk));
      answer.on('end', () => onAnswer(answer.statusCode ?? 502, Buffer.concat(parts)));
    });
    forwarded.on('error', () => res.destroy());
    forwarded.end(body);
  };

  /** A batch with picked entries among others: the others sent on, the picked ones failed. */
  const passAllBut = (req: IncomingMessage, res: ServerResponse, body: Buffer, picked: Set<string | undefined>) => {
    const input = JSON.parse(body.toString('utf8')) as { Entries: Array<{ Id?: string }> };
    const rest = { ...input, Entries: input.Entries.filter((entry) => !picked.has(entry.Id)) };
    forward(req, res, Buffer.from(JSON.stringify(rest)), (status, answer) => {
      if (status !== 200) {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(answer);
        return;
      }
      const parsed = JSON.parse(answer.toString('utf8')) as BatchAnswer;
      const failed = [...picked].map((id) => ({ Id: id, SenderFault: false, Code: 'InternalError', Message: 'held by the test gate' }));
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ Successful: parsed.Successful ?? [], Failed: [...(parsed.Failed ?? []), ...failed] }));
    });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const entries = isSendTo(req, body, queueName) ? eventEntriesOf(body) : [];
      const picked = entries.filter((entry) => gate.hold(entry.eventId));
      for (const entry of picked) gate.held.add(entry.eventId);
      for (const entry of entries) if (!picked.includes(entry)) gate.passed.push(entry.eventId);
      // Never answered: the client waits until its process dies.
      if (picked.length > 0 && picked.length === entries.length) return;
      if (picked.length > 0) passAllBut(req, res, body, new Set(picked.map((entry) => entry.entryId)));
      else forward(req, res, body);
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

function eventEntriesOf(body: Buffer): EventEntry[] {
  const input = JSON.parse(body.toString('utf8')) as { MessageBody?: string; Entries?: Array<{ Id?: string; MessageBody?: string }> };
  const entries = input.Entries ?? [{ Id: undefined, MessageBody: input.MessageBody }];
  return entries.flatMap((entry) => {
    const eventId = (JSON.parse(entry.MessageBody ?? '{}') as { eventId?: unknown }).eventId;
    return typeof eventId === 'string' ? [{ entryId: entry.Id, eventId }] : [];
  });
}
