import { logSink } from '../support/log-sink.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { createApp } from '../../functions/app.js';
import { startTestStack, type TestStack } from '../support/test-stack.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** An app whose log lines are collected, parsed. */
function appWithLog(configOverrides: Record<string, string> = {}) {
  const { logger, lines } = logSink('info');
  const config = loadConfig({ ...stack.env, LOG_LEVEL: 'info', ...configOverrides });
  const app = createApp({ config, clients: stack.clients, logger });
  return { app, lines };
}

describe('the app', () => {
  it('logs one line per request with method, path, status, duration and request id', async () => {
    const { app, lines } = appWithLog();
    const response = await app.request('/accounts/nobody1/status');
    expect(response.status).toBe(404);
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({
      method: 'GET',
      path: '/accounts/nobody1/status',
      status: 404,
      requestId: response.headers.get('x-request-id'),
    });
    expect(typeof requestLines[0]!.durationMs).toBe('number');
  });

  it("echoes the caller's well-formed X-Request-Id and replaces a malformed or overlong one", async () => {
    const { app } = appWithLog();
    const echoed = await app.request('/ping', { headers: { 'x-request-id': 'trace-12345678' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-12345678');
    for (const given of ['has space<>', 'x'.repeat(65)]) {
      const replaced = await app.request('/ping', { headers: { 'x-request-id': given } });
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('an unexpected failure: 500 internal_error with the request id, logged with its stack, none sent', async () => {
    // A table that does not exist makes DynamoDB fail in a way no route expects.
    const { app, lines } = appWithLog({ TABLE_NAME: 'no-such-table' });
    const response = await app.request('/accounts', { headers: { 'x-request-id': 'trace-12345678' } });
    expect(response.status).toBe(500);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ ok: false, error: 'internal_error', requestId: 'trace-12345678' });
    expect(JSON.stringify(body)).not.toMatch(/\bat .*\.(ts|js):\d+/);
    const logged = lines.find((l) => l.msg === 'unhandled error');
    expect(logged).toMatchObject({ requestId: 'trace-12345678', level: 50 });
    expect(String((logged?.err as Record<string, unknown> | undefined)?.stack)).toMatch(/ResourceNotFound|Cannot do operations/);
  });

  it('serves its OpenAPI document with every spec route', async () => {
    const { app } = appWithLog();
    const doc = (await (await app.request('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/accounts',
        '/accounts/{accountId}',
        '/accounts/{accountId}/chats',
        '/accounts/{accountId}/chats/{chatId}/messages',
        '/accounts/{accountId}/connect',
        '/accounts/{accountId}/contacts',
        '/accounts/{accountId}/contacts/{jid}',
        '/accounts/{accountId}/contacts/{jid}/picture',
        '/accounts/{accountId}/contacts/{phone}/exists',
        '/accounts/{accountId}/disconnect',
        '/accounts/{accountId}/groups',
        '/accounts/{accountId}/groups/{groupId}',
        '/accounts/{accountId}/groups/{groupId}/invite',
        '/accounts/{accountId}/groups/{groupId}/leave',
        '/accounts/{accountId}/groups/{groupId}/participants',
        '/accounts/{accountId}/keys',
        '/accounts/{accountId}/keys/{keyId}',
        '/accounts/{accountId}/message/delete',
        '/accounts/{accountId}/message/react',
        '/accounts/{accountId}/message/reply',
        '/accounts/{accountId}/message/send',
        '/accounts/{accountId}/message/send/audio',
        '/accounts/{accountId}/message/send/document',
        '/accounts/{accountId}/message/send/image',
        '/accounts/{accountId}/message/send/video',
        '/accounts/{accountId}/messages/{messageId}',
        '/accounts/{accountId}/messages/{messageId}/media',
        '/accounts/{accountId}/outbox',
        '/accounts/{accountId}/outbox/{messageId}',
        '/accounts/{accountId}/pairing-code',
        '/accounts/{accountId}/qr',
        '/accounts/{accountId}/settings',
        '/accounts/{accountId}/status',
        '/ping',
        '/webhooks',
        '/webhooks/{webhookId}/deliveries',
        '/accounts/{accountId}/chats/{chatId}/read',
        '/accounts/{accountId}/chats/{chatId}/history',
        '/accounts/{accountId}/message/edit',
        '/accounts/{accountId}/message/forward',
        '/accounts/{accountId}/message/send/contact',
        '/accounts/{accountId}/message/send/location',
        '/accounts/{accountId}/message/send/poll',
        '/accounts/{accountId}/message/send/sticker',
        '/accounts/{accountId}/presence',
        '/accounts/{accountId}/webhooks',
        '/accounts/{accountId}/webhooks/{webhookId}',
        '/accounts/{accountId}/webhooks/{webhookId}/replay',
        '/webhooks/{webhookId}',
        '/webhooks/{webhookId}/replay',
        '/me',
      ].sort(),
    );
  });
});
