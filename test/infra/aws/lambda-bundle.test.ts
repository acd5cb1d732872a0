import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiLambdaHandler } from '../../../infra/aws/api.js';
import { buildLambdaBundle, type LambdaBundle } from '../../../infra/build-lambda.js';
import { BUNDLED_DASHBOARD_FOLDER, DASHBOARD_ASSETS } from '../../../functions/system/dashboard.js';
import { BUNDLED_ASSET_FOLDER, SWAGGER_UI_ASSETS, SWAGGER_UI_LICENSE_FILES } from '../../../functions/system/docs.js';
import { startTestStack, type TestStack } from '../../support/test-stack.js';

/** The artifact the stack deploys: built once here, checked, then invoked in-process. */

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const maxBundleBytes = 1.5 * 1024 * 1024;
const workdir = mkdtempSync(path.join(tmpdir(), 'wa-gateway-lambda-'));
let bundle: LambdaBundle;
let source: string;

beforeAll(async () => {
  bundle = await buildLambdaBundle(path.join(workdir, 'bundle'));
  source = readFileSync(bundle.file, 'utf8');
});
afterAll(() => rmSync(workdir, { recursive: true, force: true }));

describe('Lambda bundle', () => {
  it('is one ESM file whose name and export match the function handler setting, beside the /docs and /dashboard assets', () => {
    const [file, exportName] = apiLambdaHandler.split('.');
    expect(readdirSync(bundle.outdir).sort()).toEqual([`${file}.mjs`, BUNDLED_ASSET_FOLDER, BUNDLED_DASHBOARD_FOLDER].sort());
    expect(readdirSync(bundle.dashboardDir).sort()).toEqual(Object.keys(DASHBOARD_ASSETS).sort());
    expect(readdirSync(bundle.assetDir).sort()).toEqual([...Object.keys(SWAGGER_UI_ASSETS), ...SWAGGER_UI_LICENSE_FILES].sort());
    expect(source).toMatch(new RegExp(`export\\s*\\{[^}]*\\bas ${exportName}\\b|export\\s*\\{[^}]*\\b${exportName}\\b`));
  });

  it(`stays under 1.5 MiB (${maxBundleBytes} bytes)`, () => {
    expect(bundle.bytes).toBeLessThan(maxBundleBytes);
  });

  it('leaves Swagger UI out of the JS: the /docs assets are separate files, read on request', () => {
    for (const name of Object.keys(SWAGGER_UI_ASSETS)) {
      const asset = readFileSync(path.join(bundle.assetDir, name), 'utf8');
      for (const at of [0.25, 0.5, 0.75]) {
        const start = Math.floor(asset.length * at);
        expect(source, name).not.toContain(asset.slice(start, start + 200));
      }
    }
  });

  it('leaves the console out of the JS: its script is a file beside it, read on request', () => {
    const script = readFileSync(path.join(bundle.dashboardDir, 'app.js'), 'utf8');
    for (const at of [0.25, 0.5, 0.75]) {
      const start = Math.floor(script.length * at);
      expect(source).not.toContain(script.slice(start, start + 200));
    }
  });

  it("contains none of the connector's dependencies (Baileys, libsignal, sharp, ffmpeg)", () => {
    for (const marker of ['@whiskeysockets/baileys', 'baileys', 'libsignal', 'Noise_XX_25519', 'sharp', 'ffmpeg', 'protobufjs']) {
      expect(source.toLowerCase(), marker).not.toContain(marker.toLowerCase());
    }
  });
});

describe('Lambda handler, API Gateway v2 events, against the emulators', () => {
  let stack: TestStack;
  let handler: LambdaHandler;
  const savedEnvironment = { ...process.env };

  beforeAll(async () => {
    stack = await startTestStack();
    // The bundle reads its configuration from process.env at load, as on Lambda.
    Object.assign(process.env, stack.env, {
      LOG_LEVEL: 'silent',
      TABLE_NAME: stack.config.TABLE_NAME,
      MEDIA_BUCKET: stack.config.MEDIA_BUCKET,
      COMMAND_QUEUE_NAME: stack.config.COMMAND_QUEUE_NAME,
      WEBHOOK_QUEUE_NAME: stack.config.WEBHOOK_QUEUE_NAME,
      CREATE_RESOURCES: 'false',
    });
    const loaded: unknown = await import(pathToFileURL(bundle.file).href);
    handler = z.object({ handler: z.custom<LambdaHandler>((v) => typeof v === 'function') }).parse(loaded).handler;
  });
  afterAll(async () => {
    process.env = savedEnvironment;
    await stack?.stop();
  });

  const invokeRaw = async (method: string, rawPath: string, body?: unknown) => {
    const result = await handler(httpApiEvent(method, rawPath, body), lambdaContext());
    const text = result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64').toString('utf8') : (result.body ?? '');
    return { status: result.statusCode, headers: result.headers ?? {}, text };
  };
  const invoke = async (method: string, rawPath: string, body?: unknown) => {
    const { status, text } = await invokeRaw(method, rawPath, body);
    return { status, json: JSON.parse(text) as Record<string, unknown> };
  };

  it('GET /docs and its assets, served from the files beside the bundle (no node_modules here)', async () => {
    const page = await invokeRaw('GET', '/docs');
    expect(page.status).toBe(200);
    expect(String(page.headers['content-type'])).toMatch(/^text\/html/);
    expect(page.text).toContain('docs/swagger-ui-bundle.js');
    expect(page.text).toContain('"openapi.json"');
    for (const [name, contentType] of Object.entries(SWAGGER_UI_ASSETS)) {
      const asset = await invokeRaw('GET', `/docs/${name}`);
      expect(asset.status, name).toBe(200);
      expect(asset.headers['content-type']).toBe(contentType);
      expect(asset.text).toBe(readFileSync(path.join(bundle.assetDir, name), 'utf8'));
    }
  });

  it('a browser gets swagger-ui-bundle.js gzipped, under the 1 MB response limit of a load balancer', async () => {
    const result = await handler(
      httpApiEvent('GET', '/docs/swagger-ui-bundle.js', undefined, { 'accept-encoding': 'gzip, deflate, br' }),
      lambdaContext(),
    );
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['content-encoding']).toBe('gzip');
    expect(result.isBase64Encoded).toBe(true);
    expect(Buffer.byteLength(result.body ?? '')).toBeLessThan(1_000_000);
    const original = readFileSync(path.join(bundle.assetDir, 'swagger-ui-bundle.js'));
    expect(gunzipSync(Buffer.from(result.body ?? '', 'base64')).equals(original)).toBe(true);
  });

  it('GET / leads to the console, served gzipped from the files beside the bundle', async () => {
    const root = await invokeRaw('GET', '/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('dashboard/');
    const page = await invokeRaw('GET', '/dashboard/');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/src="app\.js\?v=[\w-]{12}"/);
    for (const [name, contentType] of Object.entries(DASHBOARD_ASSETS)) {
      const result = await handler(httpApiEvent('GET', `/dashboard/${name}`, undefined, { 'accept-encoding': 'gzip' }), lambdaContext());
      expect(result.statusCode, name).toBe(200);
      expect(result.headers?.['content-type']).toBe(contentType);
      expect(result.headers?.['content-encoding']).toBe('gzip');
      const original = readFileSync(path.join(bundle.dashboardDir, name));
      expect(gunzipSync(Buffer.from(result.body ?? '', 'base64')).equals(original), name).toBe(true);
    }
  });

  it('GET /ping: 200 {ok, pong, time}', async () => {
    const { status, json } = await invoke('GET', '/ping');
    expect(status).toBe(200);
    expect(json).toMatchObject({ ok: true, pong: true });
    expect(Number.isNaN(Date.parse(String(json.time)))).toBe(false);
  });

  it('account round trip: create 201, get 200, listed, delete 200, then 404 Account not found', async () => {
    const id = `infra${Date.now().toString(36)}`;
    const created = await invoke('POST', '/accounts', { id, name: 'Infra test' });
    expect(created, JSON.stringify(created.json)).toMatchObject({ status: 201 });
    expect(created.json).toMatchObject({ ok: true, account: { _id: id } });

    const fetched = await invoke('GET', `/accounts/${id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.json).toMatchObject({ ok: true, account: { _id: id, name: 'Infra test' } });

    const listed = await invoke('GET', '/accounts');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.json.accounts)).toContain(`"${id}"`);

    const deleted = await invoke('DELETE', `/accounts/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ ok: true });

    const gone = await invoke('GET', `/accounts/${id}`);
    expect(gone).toEqual({ status: 404, json: { ok: false, error: 'Account not found' } });
  });
});

function httpApiEvent(method: string, rawPath: string, body?: unknown, headers: Record<string, string> = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    headers: {
      host: 'abc123.execute-api.eu-west-1.amazonaws.com',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'vitest' },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
  };
}

function lambdaContext(): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'wa-gateway-api',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:wa-gateway-api',
    memoryLimitInMB: '512',
    awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
    logGroupName: '/aws/lambda/wa-gateway-api',
    logStreamName: '2026/01/01/[$LATEST]abcdef',
    getRemainingTimeInMillis: () => 29_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
