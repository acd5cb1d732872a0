import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import swaggerUiPackage from 'swagger-ui-dist/package.json' with { type: 'json' };
import type { AppEnv } from '../http/services.js';
import { assetCache, assetResponder } from './static-assets.js';

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

// The file names carry no version, so the URL does (static-assets.ts).
const assetVersion = encodeURIComponent(swaggerUiPackage.version);

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

export function docsRoutes(): Hono<AppEnv> {
  const respond = assetResponder(assetCache());

  // Plain Hono routes, not createRoute: the page is not part of the API it documents.
  const routes = new Hono<AppEnv>();
  routes.get('/docs', (c) => c.html(docsPage(false), 200, { 'Cache-Control': 'no-cache' }));
  routes.get('/docs/', (c) => c.html(docsPage(true), 200, { 'Cache-Control': 'no-cache' }));
  for (const [name, contentType] of Object.entries(SWAGGER_UI_ASSETS) as Array<[AssetName, string]>) {
    routes.get(`/docs/${name}`, (c) => respond(c, name, contentType, () => readFile(join(assetFolder(), name))));
  }
  return routes;
}
