import type { Server, ServerResponse } from 'node:http';

/**
 * Closes an emulator's HTTP server only once no request is being handled.
 *
 * dynalite goes on with a request after its client has gone (an SDK client destroyed at a
 * connector's stop aborts its requests, but dynalite still runs the action's next read), and it
 * closes its database as soon as the last connection ends. The request's next read then failed
 * with "Database is closed", which dynalite throws from a callback: an uncaught error in the
 * process that ran the emulators (the test runner fails the whole run on it). So the server is
 * closed only once no request is in flight; a request counts as handled when its answer is
 * written, whether or not anyone still listens for it.
 */
export function closeWhenIdle(server: Server, limitMs: number): () => Promise<void> {
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  server.prependListener('request', (_request, response: ServerResponse) => {
    inFlight += 1;
    const end = response.end;
    response.end = function (this: ServerResponse, ...args: Parameters<ServerResponse['end']>) {
      response.end = end;
      inFlight -= 1;
      if (inFlight === 0) onIdle?.();
      return end.apply(this, args);
    } as ServerResponse['end'];
  });

  const idle = () =>
    new Promise<void>((resolveIdle) => {
      if (inFlight === 0) return resolveIdle();
      // A request that never writes an answer (an emulator's own error) must not hold a stop.
      const limit = setTimeout(resolveIdle, limitMs);
      onIdle = () => {
        clearTimeout(limit);
        resolveIdle();
      };
    });

  return async () => {
    // First the requests in flight (one arriving meanwhile extends the wait), then the close:
    // dynalite closes its database as soon as the server has closed, and the server closes as
    // soon as its connections are gone, which a departed client's already are.
    await idle();
    onIdle = undefined;
    const closed = new Promise<void>((resolveClose, reject) => {
      server.close((error) => (error ? reject(error) : resolveClose()));
    });
    // In the same turn: no request can have started in between. Idle keep-alive sockets would
    // otherwise hold close() open.
    server.closeAllConnections();
    await closed;
  };
}
