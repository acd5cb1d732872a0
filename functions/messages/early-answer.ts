import { IncomingMessage } from 'node:http';
import type { Http2Bindings, HttpBindings } from '@hono/node-server';

/** How long, at most, a connection stays open after an early answer for the client to stop sending. */
const LINGER_MS = 30_000;

type Fetch = (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>;

/**
 * Makes an answer given before the request body has fully arrived (413 on Content-Length, 404 for
 * an unknown account, 400 for a wrong file type seen in the first bytes) reach the client.
 *
 * Closing a socket that still has unread request bytes makes the kernel send a reset, and a
 * client still busy uploading then loses the answer it has not read yet (a 60 MB upload got no
 * answer at all in 2 runs of 5). So such an answer is sent at once with `Connection: close` and
 * its full Content-Length, the rest of the body is read and dropped, and the response, hence the
 * connection, ends only when the client has stopped sending: its body ended, it closed its side
 * (Node's and curl's clients do so after an answer with `Connection: close`), or LINGER_MS passed.
 *
 * The server must not drain or close on its own (@hono/node-server's `autoCleanupIncoming: false`).
 */
export function answerEarlyCleanly(fetch: Fetch): Fetch {
  return async (request, env) => {
    const response = await fetch(request, env);
    const { incoming } = env;
    // HTTP/2 ends a stream without touching the connection: nothing to protect there.
    if (!(incoming instanceof IncomingMessage) || incoming.complete || incoming.destroyed) return response;

    const stopped = clientStoppedSending(incoming, LINGER_MS);
    // A body nobody read is read here; one the handler holds is drained by it (upload.ts).
    if (request.body && !request.body.locked) void request.body.pipeTo(new WritableStream()).catch(() => undefined);

    // Answers given before the body is read are error bodies: small, so buffered to get their length.
    const bytes = new Uint8Array(await response.arrayBuffer());
    const headers = new Headers(response.headers);
    headers.set('connection', 'close');
    headers.set('content-length', String(bytes.byteLength));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
      },
      async pull(controller) {
        await stopped;
        controller.close();
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers });
  };
}

function clientStoppedSending(incoming: IncomingMessage, limitMs: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = incoming.socket;
    const done = () => {
      clearTimeout(timer);
      incoming.off('end', done).off('close', done).off('error', done);
      socket?.off('end', done).off('close', done);
      resolve();
    };
    const timer = setTimeout(done, limitMs);
    timer.unref();
    incoming.once('end', done).once('close', done).once('error', done);
    socket?.once('end', done).once('close', done);
  });
}
