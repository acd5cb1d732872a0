import { createServer, type Server, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnector } from '../../connector/connector.js';
import { createAccount, findAccount } from '../../core/store/accounts.js';
import { findLease } from '../../core/store/leases.js';
import { tableOf } from '../../core/store/table.js';
import { startSandbox, type RunningSandbox } from '../../sandbox/index.js';
import { spawnConnector } from '../e2e/support/child-connector.js';
import { captureLogs } from '../e2e/support/log-capture.js';
import { waitFor } from '../support/wait.js';
import { startTestStack, type TestStack } from '../support/test-stack.js';

/**
 * A TCP listener on 127.0.0.1 that drops every connection at once: each WhatsApp socket the
 * connector opens shows up here, fails, and makes the session schedule a reconnect (~5 s).
 */
async function startDroppingListener(): Promise<{ server: Server; url: string; connections: () => number }> {
  let count = 0;
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    count += 1;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('listener has no port');
  return { server, url: `ws://127.0.0.1:${address.port}/ws/chat`, connections: () => count };
}

describe('connector shutdown', { timeout: 90_000 }, () => {
  let sandbox: RunningSandbox;
  let stack: TestStack;
  let listener: Awaited<ReturnType<typeof startDroppingListener>>;

  beforeAll(async () => {
    // The sandbox only supplies a root key and a media CA, so that the config is a valid sandbox
    // config; the sockets go to the dropping listener.
    sandbox = await startSandbox({ port: 0, logger: pino({ level: 'silent' }) });
    listener = await startDroppingListener();
    stack = await startTestStack({
      overrides: {
        WA_WS_URL: listener.url,
        WA_ROOT_PUBLIC_KEY: sandbox.descriptor.rootPublicKey,
        WA_MEDIA_CA_FILE: sandbox.descriptor.mediaCaFile,
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await new Promise((resolve) => listener?.server.close(resolve));
    await sandbox?.stop();
  });

  it('a session whose reconnect is pending when stop begins never opens a socket again', async () => {
    const table = tableOf(stack.config, stack.clients);
    await createAccount(table, { id: 'stopper', collectionName: 'auth_stopper', status: 'connecting' });
    const logs = captureLogs('info');
    // A long poll longer than the reconnect delay: the old stop order waited for it first and
    // the reconnect fired meanwhile.
    const connector = await startConnector({
      config: stack.config,
      clients: stack.clients,
      logger: logs.logger,
      printTerminalQr: () => undefined,
      commandWaitSeconds: 10,
      webhookDelivery: false,
    });
    const scheduled = await logs.waitForLine(
      'a reconnect to be scheduled',
      (l) => l.accountId === 'stopper' && l.msg === 'reconnect scheduled',
      { timeoutMs: 30_000 },
    );
    const reconnectDueAt = Number(scheduled.time) + Number(scheduled.delayMs);
    const socketsBeforeStop = listener.connections();
    expect(socketsBeforeStop).toBeGreaterThanOrEqual(1);

    await connector.stop();
    // Proving an absence: also wait past the moment the cancelled reconnect was due.
    await waitFor('the cancelled reconnect to be overdue', () => Date.now() > reconnectDueAt + 1_000, {
      timeoutMs: 30_000,
    });

    expect(listener.connections()).toBe(socketsBeforeStop);
    expect((await findAccount(table, 'stopper', true))?.status).toBe('reconnecting');
    // Shutdown hands the account over: no session left here, the lease given up for the next connector.
    expect(connector.registry.accountIds()).toEqual([]);
    expect(await findLease(table, 'stopper')).toBeUndefined();
  });

  it('connector/main.ts on SIGTERM: logs "connector stopped" and exits 0', async () => {
    const child = spawnConnector({
      ...stack.env,
      WA_WS_URL: listener.url,
      WA_ROOT_PUBLIC_KEY: sandbox.descriptor.rootPublicKey,
      WA_MEDIA_CA_FILE: sandbox.descriptor.mediaCaFile,
    });
    try {
      await child.waitForLine('the connector to start', (l) => l.msg === 'connector started');
      expect(await child.terminate()).toBe(0);
      expect(child.lines.map((l) => l.msg)).toContain('connector stopped');
    } finally {
      await child.kill();
    }
  });
});
