import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createClients } from '../../../core/aws.js';
import { loadConfig } from '../../../core/config.js';
import { createApp } from '../../../functions/app.js';
import { SWAGGER_UI_ASSETS, swaggerUiPackageFolder } from '../../../functions/system/docs.js';

/**
 * The /docs page and its assets never touch AWS: the clients point at a closed port, so a
 * route that did would fail here.
 */
function appWith(env: Record<string, string> = {}) {
  const config = loadConfig({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', ...env });
  return createApp({ config, clients: createClients(config), logger: pino({ level: 'silent' }) });
}

/** The stylesheet and script URLs the page loads, resolved as a browser would against `pageUrl`. */
function loadedUrls(html: string, pageUrl: string) {
  const href = /<link rel="stylesheet" href="([^"]+)">/.exec(html)?.[1];
  const scripts = [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((match) => match[1]);
  const spec = /url: new URL\("([^"]+)", window\.location\.href\)/.exec(html)?.[1];
  const resolve = (relative: string | undefined) => (relative === undefined ? undefined : new URL(relative, pageUrl));
  return { stylesheet: resolve(href), scripts: scripts.map(resolve), spec: resolve(spec) };
}

describe('GET /docs', () => {
  for (const pagePath of ['/docs', '/docs/']) {
    it(`${pagePath}: an HTML page loading our own Swagger UI assets and /openapi.json, by relative URLs`, async () => {
      const response = await appWith().request(pagePath);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await response.text();
      expect(html).toContain('SwaggerUIBundle(');
      expect(html).not.toMatch(/https?:\/\//);
      expect(html).toContain('validatorUrl: null');

      // Behind an API Gateway stage path the same page must still find everything.
      for (const base of ['http://api.test', 'http://api.test/prod']) {
        const urls = loadedUrls(html, `${base}${pagePath}`);
        expect(urls.spec?.href).toBe(`${base}/openapi.json`);
        expect(urls.stylesheet?.pathname).toBe(`${new URL(base).pathname.replace(/\/$/, '')}/docs/swagger-ui.css`);
        expect(urls.scripts.map((url) => url?.pathname)).toEqual([
          `${new URL(base).pathname.replace(/\/$/, '')}/docs/swagger-ui-bundle.js`,
        ]);
      }
    });
  }

  it('every asset the page loads answers 200 from this server, with its content type and a long cache', async () => {
    const app = appWith();
    const html = await (await app.request('/docs')).text();
    const urls = loadedUrls(html, 'http://api.test/docs');
    for (const url of [urls.stylesheet, ...urls.scripts]) {
      const response = await app.request(`${url?.pathname}${url?.search}`);
      expect(response.status, url?.href).toBe(200);
      const name = url?.pathname.split('/').pop() as keyof typeof SWAGGER_UI_ASSETS;
      expect(response.headers.get('content-type')).toBe(SWAGGER_UI_ASSETS[name]);
      expect(response.headers.get('cache-control')).toMatch(/max-age=31536000/);
      expect(Buffer.from(await response.arrayBuffer()).equals(readFileSync(join(swaggerUiPackageFolder(), name)))).toBe(true);
    }
    const spec = await app.request(`${urls.spec?.pathname}`);
    expect(spec.status).toBe(200);
  });

  it('assets travel gzipped to a client that accepts gzip, as they are to one that does not', async () => {
    const app = appWith();
    for (const name of Object.keys(SWAGGER_UI_ASSETS)) {
      const original = readFileSync(join(swaggerUiPackageFolder(), name));
      const compressed = await app.request(`/docs/${name}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(compressed.status).toBe(200);
      expect(compressed.headers.get('content-encoding')).toBe('gzip');
      expect(compressed.headers.get('vary')).toBe('Accept-Encoding');
      const bytes = Buffer.from(await compressed.arrayBuffer());
      expect(bytes.length).toBeLessThan(original.length);
      expect(gunzipSync(bytes).equals(original)).toBe(true);

      const refused = await app.request(`/docs/${name}`, { headers: { 'accept-encoding': 'br, gzip;q=0' } });
      expect(refused.headers.get('content-encoding')).toBeNull();
      expect(Buffer.from(await refused.arrayBuffer()).equals(original)).toBe(true);
    }
  });

  it('an asset the page does not use: 404', async () => {
    expect((await appWith().request('/docs/index.html')).status).toBe(404);
    expect((await appWith().request('/docs/swagger-ui.js.map')).status).toBe(404);
  });

  it('with API_KEY set, the page and its assets stay public while the API needs a key', async () => {
    const app = appWith({ API_KEY: 'docs-admin-key-0123456789' });
    for (const path of ['/docs', '/docs/', '/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/openapi.json']) {
      expect((await app.request(path)).status, path).toBe(200);
    }
    expect((await app.request('/accounts')).status).toBe(401);
    expect((await app.request('/docs/index.html')).status).toBe(401);
  });
});

describe('the OpenAPI document', () => {
  const operationsOf = async () => {
    const document = (await (await appWith().request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { summary?: string }>>;
    };
    return Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, summary: operation.summary })),
    );
  };

  it('leaves the /docs routes out: the page is not part of the API', async () => {
    const operations = await operationsOf();
    expect(operations.length).toBeGreaterThan(20);
    expect(operations.filter(({ route }) => route.includes('/docs'))).toEqual([]);
  });

  it('gives every operation a summary', async () => {
    const missing = (await operationsOf()).filter(({ summary }) => !summary?.trim()).map(({ route }) => route);
    expect(missing).toEqual([]);
  });
});
