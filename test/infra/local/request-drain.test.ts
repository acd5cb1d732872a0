import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeWhenIdle } from '../../../infra/local/request-drain.js';

describe('closeWhenIdle', () => {
  it('closes only once a request whose client has gone has been answered', async () => {
    let received: (response: ServerResponse) => void = () => undefined;
    const arrived = new Promise<ServerResponse>((resolveArrived) => {
      received = resolveArrived;
    });
    const server = createServer((_request, response) => received(response));
    const stop = closeWhenIdle(server, 60_000);
    const events: string[] = [];
    // dynalite closes its database on this event: it must come after the answer.
    server.on('close', () => events.push('server closed'));
    const connectionClosed = new Promise<void>((resolveClosed) => {
      server.on('connection', (socket) => socket.on('close', () => resolveClosed()));
    });
    await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
    const { port } = server.address() as AddressInfo;

    // A client that asks, then goes away before the answer (an SDK client destroyed at a stop).
    const client = request({ host: '127.0.0.1', port, method: 'POST', path: '/' });
    client.on('error', () => undefined);
    client.end('{}');
    const response = await arrived;
    client.destroy();
    await connectionClosed;

    const stopped = stop().then(() => events.push('stopped'));
    // The connection is gone: a plain close() would have completed within this turn of the loop.
    await new Promise((resolveTurn) => setImmediate(resolveTurn));
    expect(events).toEqual([]);
    events.push('answered');
    response.end('{}');
    await stopped;
    expect(events).toEqual(['answered', 'server closed', 'stopped']);
  });

  it('closes at once when nothing is in flight', async () => {
    const server = createServer((_request, response) => response.end());
    const stop = closeWhenIdle(server, 60_000);
    await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
    const { port } = server.address() as AddressInfo;
    const answered = await fetch(`http://127.0.0.1:${port}/`);
    expect(answered.status).toBe(200);
    await stop();
    expect(server.listening).toBe(false);
  });
});
