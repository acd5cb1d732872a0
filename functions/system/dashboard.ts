import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import type { AppEnv } from '../http/services.js';
import { assetCache, assetResponder } from './static-assets.js';

/**
 * `GET /dashboard/`: the web console (dashboard/), a client of this API and nothing more: every
 * action it takes is a documented route called with the key the person signed in with. Served
 * entirely by this API (no CDN, no fonts or scripts from elsewhere), the same on Node and on
 * Lambda. `GET /` and `GET /dashboard` lead there.
 */

/** The console's files, with their content types. */
export const DASHBOARD_ASSETS = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;
type AssetName = keyof typeof DASHBOARD_ASSETS;

/** The folder, next to the Lambda bundle or the image's server, that holds the built console. */
export const BUNDLED_DASHBOARD_FOLDER = 'dashboard';

/** The paths anyone may fetch, keys or not: the page and its files (the console asks for a key). */
export const DASHBOARD_PATHS = ['/', '/dashboard', '/dashboard/', ...Object.keys(DASHBOARD_ASSETS).map((name) => `/dashboard/${name}`)];

// Not a literal: bundlers must not follow it (the builder needs esbuild, which only a checkout
// has; the Lambda bundle and the image carry the console prebuilt beside the code).
const BUILDER_MODULE = '../../infra/build-dashboard.js';

async function loadAssets(): Promise<Record<AssetName, Buffer>> {
  const beside = fileURLToPath(new URL(`./${BUNDLED_DASHBOARD_FOLDER}/`, import.meta.url));
  if (existsSync(beside)) {
    const [script, styles] = await Promise.all([readFile(join(beside, 'app.js')), readFile(join(beside, 'app.css'))]);
    return { 'app.js': script, 'app.css': styles };
  }
  const builder = (await import(BUILDER_MODULE)) as { buildDashboard(): Promise<Record<AssetName, Buffer>> };
  return builder.buildDashboard();
}

const versionOf = (content: Buffer) => createHash('sha256').update(content).digest('base64url').slice(0, 12);

/**
 * The page. Relative URLs, so it works under an API Gateway stage path too. The policy lets it
 * load and call nothing but this origin (images it makes from API answers are blob: URLs).
 */
function dashboardPage(versions: Record<AssetName, string>): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WhatsApp gateway</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="app.css?v=${versions['app.css']}">
</head>
<body>
<div id="app"></div>
<noscript>The console needs JavaScript.</noscript>
<script type="module" src="app.js?v=${versions['app.js']}"></script>
</body>
</html>
`;
}

const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function dashboardRoutes(): Hono<AppEnv> {
  const built = assetCache<Record<AssetName, Buffer>>();
  const loaded = () => built('console', loadAssets);
  const respond = assetResponder(assetCache());
  const pages = assetCache<string>();
  // The page names its files by content: made once, when they are.
  const page = () =>
    pages('page', async () => {
      const files = await loaded();
      return dashboardPage({ 'app.js': versionOf(files['app.js']), 'app.css': versionOf(files['app.css']) });
    });

  // Plain Hono routes, not createRoute: the console is not part of the API it drives.
  const routes = new Hono<AppEnv>();
  // Relative redirects: right under a stage path as well.
  routes.get('/', (c) => c.redirect('dashboard/', 302));
  routes.get('/dashboard', (c) => c.redirect('dashboard/', 302));
  routes.get('/dashboard/', async (c) =>
    c.html(await page(), 200, {
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': PAGE_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    }),
  );
  for (const [name, contentType] of Object.entries(DASHBOARD_ASSETS) as Array<[AssetName, string]>) {
    routes.get(`/dashboard/${name}`, (c) => respond(c, name, contentType, async () => (await loaded())[name]));
  }
  return routes;
}
