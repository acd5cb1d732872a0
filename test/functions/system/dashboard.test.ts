import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createClients } from '../../../core/aws.js';
import { loadConfig } from '../../../core/config.js';
import { createApp } from '../../../functions/app.js';
import { DASHBOARD_ASSETS } from '../../../functions/system/dashboard.js';

/**
 * The console's page and files, as the Node server serves them from a checkout (built on first
 * request). They never touch AWS: the clients point at a closed port, so a route that did would
 * fail here.
 */
function appWith(env: Record<string, string> = {}) {
  const config = loadConfig({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', ...env });
  return createApp({ config, clients: createClients(config), logger: pino({ level: 'silent' }) });
}

/** What a browser loads for the console: its page's files, resolved against the page's URL. */
function loadedUrls(html: string, pageUrl: string) {
  const stylesheet = /<link rel="stylesheet" href="([^"]+)">/.exec(html)?.[1];
  const script = /<script type="module" src="([^"]+)"><\/script>/.exec(html)?.[1];
  return [stylesheet, script].map((relative) => new URL(relative ?? 'missing', pageUrl));
}

/** The budget for everything the page loads, gzipped. */
const FIRST_LOAD_BUDGET_BYTES = 150 * 1024;

describe('GET /dashboard', () => {
  it('/ and /dashboard lead to /dashboard/ with relative redirects (right under a stage path too)', async () => {
    const app = appWith();
    for (const path of ['/', '/dashboard']) {
      const answer = await app.request(path);
      expect(answer.status, path).toBe(302);
      expect(new URL(answer.headers.get('location') ?? '', `https://example.com/prod${path}`).pathname).toBe('/prod/dashboard/');
    }
  });

  it('serves a page that loads only its own files, versioned by content, under a policy that forbids any other host', async () => {
    const app = appWith();
    const page = await app.request('/dashboard/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const policy = page.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "img-src 'self' blob: data:"])
      expect(policy).toContain(directive);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    const urls = loadedUrls(html, 'https://example.com/prod/dashboard/');
    expect(urls.map((url) => url.pathname)).toEqual(['/prod/dashboard/app.css', '/prod/dashboard/app.js']);
    for (const url of urls) expect(url.searchParams.get('v')).toMatch(/^[\w-]{12}$/);
  });

  it('sends each file gzipped when asked, cacheable for good, and all of them within the first-load budget', async () => {
    const app = appWith();
    let transferred = 0;
    for (const [name, contentType] of Object.entries(DASHBOARD_ASSETS)) {
      const plain = await app.request(`/dashboard/${name}`);
      expect(plain.status, name).toBe(200);
      expect(plain.headers.get('content-type')).toBe(contentType);
      expect(plain.headers.get('cache-control')).toContain('immutable');
      const original = Buffer.from(await plain.arrayBuffer());
      const zipped = await app.request(`/dashboard/${name}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(zipped.headers.get('content-encoding')).toBe('gzip');
      const compressed = Buffer.from(await zipped.arrayBuffer());
      expect(gunzipSync(compressed).equals(original), name).toBe(true);
      transferred += compressed.length;
    }
    expect(transferred).toBeLessThan(FIRST_LOAD_BUDGET_BYTES);
  });

  it('is public with API_KEY set: the page asks for the key itself', async () => {
    const app = appWith({ API_KEY: 'admin-key-for-the-console-test' });
    for (const path of ['/', '/dashboard', '/dashboard/', ...Object.keys(DASHBOARD_ASSETS).map((name) => `/dashboard/${name}`)]) {
      expect((await app.request(path)).status, path).toBeLessThan(400);
    }
    expect((await app.request('/accounts')).status).toBe(401);
  });
});
