import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Hono } from 'hono';
import swaggerUiPackage from 'swagger-ui-dist/package.json' with { type: 'json' };
import type { AppEnv } from '../http/services.js';

/**
 * `GET /docs`: Swagger UI over `/openapi.json`, served entirely by this API (no CDN, so it works
 * offline). The asset files are read from disk on first request, never at import: they would
 * triple the Lambda bundle and its cold start (docs/deploy-aws.md).
 */

/** The Swagger UI files the page loads, with their content types. */
export const SWAGGER_UI_ASSETS = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
} as const;
type AssetName = keyof typeof SWAGGER_UI_ASSETS;

/** Licence files shipped along with the assets wherever they are copied. */
export const SWAGGER_UI_LICENSE_FILES = ['LICENSE', 'NOTICE'] as const;

/** The folder, next to the Lambda bundle, that infra/build-lambda.ts copies the assets into. */
export const BUNDLED_ASSET_FOLDER = 'swagger-ui';

/** The paths anyone may fetch, keys or not: the page (with or without its slash) and its assets. */
export const DOCS_PATHS = ['/docs', '/docs/', ...Object.keys(SWAGGER_UI_ASSETS).map((name) => `/docs/${name}`)];

/** swagger-ui-dist's own folder in node_modules. */
export function swaggerUiPackageFolder(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/**
 * Next to the bundle when running as the Lambda bundle; otherwise (from source, or the Docker
 * image's bundle, which keeps node_modules) the package's own folder.
 */
function assetFolder(): string {
  const besideThisModule = fileURLToPath(new URL(`./${BUNDLED_ASSET_FOLDER}/`, import.meta.url));
  return existsSync(besideThisModule) ? besideThisModule : swaggerUiPackageFolder();
}

// The file names carry no version, so the URL does: a new Swagger UI is a new URL, and the old
// one may be cached for good.
const assetVersion = encodeURIComponent(swaggerUiPackage.version);
const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * The page, with every URL relative so it works under an API Gateway stage path too. `/docs`
 * and `/docs/` resolve relative URLs from different folders, so each gets its own.
 */
function docsPage(withTrailingSlash: boolean): string {
  const assets = withTrailingSlash ? '' : 'docs/';
  const spec = withTrailingSlash ? '../openapi.json' : 'openapi.json';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WhatsApp gateway API</title>
<link rel="stylesheet" href="${assets}swagger-ui.css?v=${assetVersion}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assets}swagger-ui-bundle.js?v=${assetVersion}"></script>
<script>
window.ui = SwaggerUIBundle({
  url: new URL(${JSON.stringify(spec)}, window.location.href).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  // The default sends the document's URL to validator.swagger.io: nothing leaves this machine.
  validatorUrl: null,
});
</script>
</body>
</html>
`;
}

const gzipped = promisify(gzip);

/** True unless the client refuses gzip or does not name it (`gzip;q=0`, or no header). */
function acceptsGzip(acceptEncoding: string | undefined): boolean {
  return (acceptEncoding ?? '').split(',').some((entry) => {
    const [coding, ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (coding !== 'gzip') return false;
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    return quality === undefined || Number(quality.slice(2)) > 0;
  });
}

export function docsRoutes(): Hono<AppEnv> {
  // Read (and compressed) once per process, on first request; a failure is retried next time.
  const cache = new Map<string, Promise<Buffer>>();
  const remembered = (key: string, produce: () => Promise<Buffer>) => {
    let content = cache.get(key);
    if (!content) {
      content = produce();
      content.catch(() => cache.delete(key));
      cache.set(key, content);
    }
    return content;
  };
  const load = (name: AssetName) => remembered(name, () => readFile(join(assetFolder(), name)));
  // Compressed, swagger-ui-bundle.js (1.7 MB) fits the 1 MB response limit of a load balancer in
  // front of Lambda (docs/deploy-aws.md), and every transfer is a quarter of the size.
  const loadGzipped = (name: AssetName) => remembered(`${name}.gz`, async () => gzipped(await load(name)));

  // Plain Hono routes, not createRoute: the page is not part of the API it documents.
  const routes = new Hono<AppEnv>();
  routes.get('/docs', (c) => c.html(docsPage(false), 200, { 'Cache-Control': 'no-cache' }));
  routes.get('/docs/', (c) => c.html(docsPage(true), 200, { 'Cache-Control': 'no-cache' }));
  for (const [name, contentType] of Object.entries(SWAGGER_UI_ASSETS) as Array<[AssetName, string]>) {
    routes.get(`/docs/${name}`, async (c) => {
      const headers = { 'Content-Type': contentType, 'Cache-Control': ASSET_CACHE_CONTROL, Vary: 'Accept-Encoding' };
      if (!acceptsGzip(c.req.header('accept-encoding'))) return c.body(new Uint8Array(await load(name)), 200, headers);
      return c.body(new Uint8Array(await loadGzipped(name)), 200, { ...headers, 'Content-Encoding': 'gzip' });
    });
  }
  return routes;
}
