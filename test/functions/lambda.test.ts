import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { updateAccountStatus } from '../../core/store/accounts.js';
import { tableOf } from '../../core/store/table.js';
import { startFakeConnector, type FakeConnector } from '../support/fake-connector.js';
import { fixtures } from '../support/media-fixtures.js';
import { startTestApi } from '../support/test-api.js';
import { lambdaRequestContext } from '../support/lambda-event.js';
import { startTestStack, type TestStack } from '../support/test-stack.js';

type Handler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

let stack: TestStack;
let api: Awaited<ReturnType<typeof startTestApi>>;
let connector: FakeConnector;
let handler: Handler;

beforeAll(async () => {
  stack = await startTestStack();
  api = await startTestApi(stack);
  connector = startFakeConnector(stack);
  // functions/lambda.ts reads its config from the environment at import, as on AWS. This test
  // file runs in its own worker process, so setting the environment here touches nothing else.
  Object.assign(process.env, stack.env, { LOG_LEVEL: 'silent' });
  ({ handler } = (await import('../../functions/lambda.js')) as unknown as { handler: Handler });
});
afterAll(async () => {
  await connector?.stop();
  await api?.close();
  await stack?.stop();
});

function event(
  method: string,
  rawPath: string,
  options: { body?: Buffer | string; headers?: Record<string, string>; query?: string } = {},
): APIGatewayProxyEventV2 {
  const binary = Buffer.isBuffer(options.body);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: options.query ?? '',
    headers: { host: 'api.example.com', ...options.headers },
    requestContext: lambdaRequestContext(method, rawPath),
    isBase64Encoded: binary,
    ...(options.body !== undefined ? { body: binary ? (options.body as Buffer).toString('base64') : (options.body as string) } : {}),
  };
}

const jsonOf = (result: APIGatewayProxyStructuredResultV2) => JSON.parse(String(result.body)) as Record<string, unknown>;

describe('Lambda handler (API Gateway v2)', () => {
  it('answers the same status and body as the Node server for reads and errors', async () => {
    const id = `lambda${Date.now().toString(36)}`;
    const created = await handler(
      event('POST', '/accounts', { body: JSON.stringify({ id, name: 'L' }), headers: { 'content-type': 'application/json' } }),
    );
    expect(created.statusCode).toBe(201);
    expect(jsonOf(created)).toMatchObject({ ok: true, account: { _id: id, name: 'L', status: 'connecting' } });

    const paths: Array<[string, string]> = [
      ['GET', `/accounts/${id}`],
      ['GET', '/accounts/nosuchaccount1'],
      ['GET', `/accounts/${id}/chats`],
      ['GET', `/accounts/${id}/chats?limit=500`],
      ['GET', `/accounts/${id}/messages/NOPE`],
      ['GET', '/no/such/route'],
    ];
    for (const [method, path] of paths) {
      const [rawPath, query] = path.split('?');
      const fromLambda = await handler(event(method, rawPath!, { query: query ?? '' }));
      const fromNode = await api.call(method, path);
      expect({ path, status: fromLambda.statusCode, body: jsonOf(fromLambda) }).toEqual({
        path,
        status: fromNode.status,
        body: fromNode.body,
      });
      expect(fromLambda.headers?.['content-type']).toMatch(/application\/json/);
    }
  });

  it('malformed JSON: 400 Invalid JSON body', async () => {
    const result = await handler(event('POST', '/accounts', { body: '{', headers: { 'content-type': 'application/json' } }));
    expect(result.statusCode).toBe(400);
    expect(jsonOf(result)).toEqual({ ok: false, error: 'Invalid JSON body' });
  });

  it('a multipart image send (base64 body, whole) takes the same streaming path', async () => {
    const id = `lambdaimg${Date.now().toString(36)}`;
    await api.call('POST', '/accounts', { id });
    await updateAccountStatus(tableOf(stack.config, stack.clients), id, { status: 'connected' });
    const form = new FormData();
    form.append('to', '15551234567@s.whatsapp.net');
    form.append('image', new Blob([new Uint8Array(fixtures.png)]), 'p.png');
    const encoded = new Response(form);
    const body = Buffer.from(await encoded.arrayBuffer());
    const result = await handler(
      event('POST', `/accounts/${id}/message/send/image`, {
        body,
        headers: { 'content-type': encoded.headers.get('content-type')!, 'content-length': String(body.length) },
      }),
    );
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toMatchObject({ ok: true, messageId: expect.stringMatching(/^3EB0/) });
    const command = await connector.waitFor((c) => c.type === 'send_media' && c.accountId === id);
    expect(command.payload).toMatchObject({ mimetype: 'image/png', size: fixtures.png.length });
  });
});
