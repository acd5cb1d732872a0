import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { startFakeSecretsExtension, type FakeSecretsExtension } from '../support/fake-secrets-extension.js';
import { lambdaRequestContext } from '../support/lambda-event.js';
import { startTestStack, type TestStack } from '../support/test-stack.js';

/**
 * Access keys through the Lambda handler (functions/lambda.ts), configured as the CDK stack
 * configures it: API_KEY_SECRET_ARN names a secret read through the secrets extension.
 */
type Handler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

const ADMIN_OLD = 'lambda-admin-old-0123456789';
const ADMIN_NEW = 'lambda-admin-new-9876543210';
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:wa-gateway-api-key-AbCdEf';

let stack: TestStack;
let extension: FakeSecretsExtension;
let handler: Handler;

beforeAll(async () => {
  stack = await startTestStack();
  extension = await startFakeSecretsExtension({ [SECRET_ARN]: `${ADMIN_OLD},${ADMIN_NEW}` }, 'session-token');
  // This file runs in its own worker process: the environment set here touches nothing else.
  Object.assign(process.env, stack.env, {
    LOG_LEVEL: 'silent',
    API_KEY_SECRET_ARN: SECRET_ARN,
    PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(extension.port),
    AWS_SESSION_TOKEN: 'session-token',
  });
  ({ handler } = (await import('../../functions/lambda.js')) as unknown as { handler: Handler });
});
afterAll(async () => {
  await extension?.close();
  await stack?.stop();
});

function event(method: string, rawPath: string, headers: Record<string, string> = {}, body?: unknown): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    headers: { host: 'api.example.com', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    requestContext: lambdaRequestContext(method, rawPath),
    isBase64Encoded: false,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

async function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const result = await handler(event(method, path, headers, body));
  return { status: result.statusCode, body: JSON.parse(String(result.body)) as Record<string, unknown>, headers: result.headers ?? {} };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('Lambda handler with API_KEY', () => {
  it('missing or unknown key: 401 Unauthorized, WWW-Authenticate: Bearer; /ping stays public', async () => {
    const missing = await call('GET', '/accounts/nosuchaccount');
    expect({ status: missing.status, body: missing.body }).toEqual({ status: 401, body: { ok: false, error: 'Unauthorized' } });
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expect((await call('GET', '/accounts', bearer('wrong'))).status).toBe(401);
    expect((await call('GET', '/ping')).status).toBe(200);
  });

  it('/docs, /docs/ and their Swagger UI assets stay public, with their content types', async () => {
    const expected: Record<string, RegExp> = {
      '/docs': /^text\/html/,
      '/docs/': /^text\/html/,
      '/docs/swagger-ui.css': /^text\/css/,
      '/docs/swagger-ui-bundle.js': /^text\/javascript/,
    };
    for (const [path, contentType] of Object.entries(expected)) {
      const result = await handler(event('GET', path));
      expect(result.statusCode, path).toBe(200);
      expect(String(result.headers?.['content-type']), path).toMatch(contentType);
    }
    const page = await handler(event('GET', '/docs'));
    expect(String(page.body)).toContain('"openapi.json"');
  });

  it('admin: both keys of a rotation, read from the secret at cold start, work', async () => {
    expect(extension.requests).toEqual([SECRET_ARN]);
    expect((await call('GET', '/accounts', bearer(ADMIN_OLD))).status).toBe(200);
    expect((await call('GET', '/accounts', { 'x-api-key': ADMIN_NEW })).status).toBe(200);
  });

  it('account key: its account 200, another 403, keys 403; revoked: 401', async () => {
    const id = `lambdakey${Date.now().toString(36)}`;
    const other = `${id}x`;
    for (const accountId of [id, other]) {
      expect((await call('POST', '/accounts', bearer(ADMIN_NEW), { id: accountId })).status).toBe(201);
    }
    const created = await call('POST', `/accounts/${id}/keys`, bearer(ADMIN_NEW), { name: 'lambda' });
    expect(created).toMatchObject({ status: 201, body: { ok: true, key: { name: 'lambda' } } });
    const secret = String(created.body.secret);
    const keyId = String((created.body.key as { keyId: string }).keyId);

    expect((await call('GET', `/accounts/${id}`, bearer(secret))).status).toBe(200);
    expect(await call('GET', `/accounts/${other}`, bearer(secret))).toMatchObject({ status: 403, body: { ok: false, error: 'Forbidden' } });
    expect((await call('GET', `/accounts/${id}/keys`, bearer(secret))).status).toBe(403);
    expect((await call('DELETE', `/accounts/${id}`, bearer(secret))).status).toBe(403);

    expect(await call('DELETE', `/accounts/${id}/keys/${keyId}`, bearer(ADMIN_OLD))).toMatchObject({
      status: 200,
      body: { ok: true, message: 'Key revoked' },
    });
    expect((await call('GET', `/accounts/${id}`, bearer(secret))).status).toBe(401);
  });
});
