/**
 * S3, SQS and API requests, counted where they arrive: at the embedded emulators' HTTP servers
 * and the API server of this process (every process's requests, the connector children's
 * included). It wraps `http.Server.prototype.emit`, so it sees the requests of servers created
 * before or after it; a server counts once `watch` names its port.
 */
import { Server, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Service = 's3' | 'sqs' | 'api';

const ports = new Map<number, Service>();
const counts = new Map<string, number>();
const count = (name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);

/** Counts the requests reaching the server on `url`'s port as `service`'s. */
export function watch(service: Service, url: string): void {
  ports.set(Number(new URL(url).port), service);
}

/** S3's billing classes: PUT, COPY, POST and LIST at one price, GET at another, DELETE free. */
function s3Operation(req: IncomingMessage): string {
  const url = new URL(req.url ?? '/', 'http://s3');
  const method = req.method ?? 'GET';
  if (method === 'DELETE') return 'DELETE';
  if (method === 'GET' && (url.searchParams.has('list-type') || url.pathname.split('/').filter(Boolean).length <= 1)) return 'LIST';
  if (method === 'GET' || method === 'HEAD') return 'GET';
  return 'PUT';
}

/** The SQS action (JSON protocol: X-Amz-Target) and whether its queue is FIFO (from the body's QueueUrl). */
function meterSqs(req: IncomingMessage): void {
  const action = String(req.headers['x-amz-target'] ?? 'unknown').replace(/^AmazonSQS\./, '');
  const chunks: Buffer[] = [];
  const emit = req.emit;
  // Observes the body as the emulator reads it, without reading it itself.
  req.emit = function observed(this: IncomingMessage, event: string | symbol, ...args: unknown[]) {
    if (event === 'data' && Buffer.isBuffer(args[0])) chunks.push(args[0]);
    if (event === 'end') count(`sqs ${action} ${/\.fifo"/.test(Buffer.concat(chunks).toString('utf8')) ? 'fifo' : 'standard'}`);
    return emit.call(this, event, ...args);
  } as typeof req.emit;
}

const emit = Server.prototype.emit;
Server.prototype.emit = function metered(this: Server, event: string | symbol, ...args: unknown[]) {
  if (event === 'request') {
    const address = this.address() as AddressInfo | null;
    const service = address ? ports.get(address.port) : undefined;
    const req = args[0] as IncomingMessage;
    if (service === 's3') count(`s3 ${s3Operation(req)}`);
    else if (service === 'sqs') meterSqs(req);
    else if (service === 'api') count(`api ${req.method ?? 'GET'}`);
  }
  return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
} as typeof Server.prototype.emit;

/** A copy of the counts so far, by `<service> <operation>`. */
export function httpTotals(): Map<string, number> {
  return new Map(counts);
}
