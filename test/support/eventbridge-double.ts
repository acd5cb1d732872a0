import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { waitFor } from './wait.js';

/** A PutEvents entry as the client sent it. */
const putEventsEntrySchema = z.looseObject({
  Source: z.string().optional(),
  DetailType: z.string().optional(),
  Detail: z.string().optional(),
  EventBusName: z.string().optional(),
});
type PutEventsEntry = z.infer<typeof putEventsEntrySchema>;
const putEventsRequestSchema = z.looseObject({ Entries: z.array(putEventsEntrySchema) });

export interface PutEventsCall {
  entries: PutEventsEntry[];
  headers: IncomingHttpHeaders;
  /** The region the request was signed for (from its SigV4 Authorization header). */
  signedRegion: string | undefined;
}

/**
 * How the double answers one entry: accepted, or failed with an error code (a request that
 * succeeds with FailedEntryCount > 0, as EventBridge answers a throttled entry). `count` is the
 * number of calls so far, this one included.
 */
export type EntryAnswer = (entry: PutEventsEntry, count: number) => 'accepted' | { errorCode: string };

/**
 * EventBridge cannot run here: this is the part of its JSON protocol (awsJson1_1, `X-Amz-Target:
 * AWSEvents.PutEvents`) the gateway uses, on 127.0.0.1, for the real SDK client pointed at it by
 * AWS_ENDPOINT_URL_EVENTBRIDGE. It records every PutEvents call exactly as sent and answers as
 * EventBridge does: `{FailedEntryCount, Entries: [{EventId} | {ErrorCode, ErrorMessage}]}`. Any
 * other operation is a 400 `UnknownOperationException`.
 */
export class EventBridgeDouble {
  readonly calls: PutEventsCall[] = [];
  private server: Server | undefined;

  constructor(private answer: EntryAnswer = () => 'accepted') {}

  get endpoint(): string {
    const address = this.server?.address() as AddressInfo | undefined;
    if (!address) throw new Error('EventBridgeDouble: not started');
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const reply = (status: number, body: unknown) =>
          res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
        const request = putEventsRequestSchema.safeParse(safeJson(Buffer.concat(chunks).toString('utf8')));
        if (req.method !== 'POST' || req.headers['x-amz-target'] !== 'AWSEvents.PutEvents' || !request.success) {
          reply(400, { __type: 'UnknownOperationException', message: `not served by the double: ${String(req.headers['x-amz-target'])}` });
          return;
        }
        const authorization = String(req.headers.authorization ?? '');
        this.calls.push({
          entries: request.data.Entries,
          headers: req.headers,
          signedRegion: /Credential=[^/]+\/\d{8}\/([^/]+)\/events\/aws4_request/.exec(authorization)?.[1],
        });
        const answers = request.data.Entries.map((entry) => this.answer(entry, this.calls.length));
        reply(200, {
          FailedEntryCount: answers.filter((a) => a !== 'accepted').length,
          Entries: answers.map((a) =>
            a === 'accepted' ? { EventId: randomUUID() } : { ErrorCode: a.errorCode, ErrorMessage: `${a.errorCode} (double)` },
          ),
        });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** Every entry received so far, in order. */
  entries(): PutEventsEntry[] {
    return this.calls.flatMap((call) => call.entries);
  }

  async waitForEntries(count: number, timeoutMs = 30_000): Promise<PutEventsEntry[]> {
    return waitFor(`${count} PutEvents entries`, () => this.entries().length >= count && this.entries(), { timeoutMs });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
