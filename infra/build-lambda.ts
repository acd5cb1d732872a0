import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { BUNDLED_DASHBOARD_FOLDER } from '../functions/system/dashboard.js';
import { BUNDLED_ASSET_FOLDER, SWAGGER_UI_ASSETS, SWAGGER_UI_LICENSE_FILES, swaggerUiPackageFolder } from '../functions/system/docs.js';
import { writeDashboard } from './build-dashboard.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

export interface LambdaBundle {
  /** Directory holding the bundle, usable as a Lambda code asset. */
  outdir: string;
  /** The bundle file, `index.mjs` (handler `index.handler`). */
  file: string;
  /** Size of the bundle file alone (what a cold start loads). */
  bytes: number;
  /** The Swagger UI files of `/docs`, beside the bundle: read on request, never loaded at start. */
  assetDir: string;
  /** The built console of `/dashboard` (app.js, app.css), beside the bundle, read on request. */
  dashboardDir: string;
}

const BUILTIN_SHIM = 'builtin-via-require';

/**
 * Loads Node's built-in modules with require() (the banner's createRequire) instead of ESM
 * imports. An ESM import of a built-in builds its ES module facade, which reads every export,
 * lazy getters included: for node:http that loads Node's internal undici (fetch, WebSocket),
 * tens of milliseconds of a cold start for nothing the handler uses.
 */
const builtinsViaRequire: Plugin = {
  name: BUILTIN_SHIM,
  setup(build) {
    build.onResolve({ filter: /^[a-z0-9:_/]+$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined;
      return args.namespace === BUILTIN_SHIM ? { path: args.path, external: true } : { path: args.path, namespace: BUILTIN_SHIM };
    });
    build.onLoad({ filter: /.*/, namespace: BUILTIN_SHIM }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

const NO_ZOD_LOCALES = 'no-zod-locales';

/**
 * zod's `z` namespace re-exports every locale (`z.locales`, a quarter of the bundle), and
 * @hono/zod-openapi passes `z` around as a value, so esbuild cannot drop them. We never call
 * `z.config(z.locales.xx())`: the English messages zod itself loads (from locales/en.js, not
 * this index) are the only ones used, so the index becomes an empty module.
 */
const withoutZodLocales: Plugin = {
  name: NO_ZOD_LOCALES,
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales', namespace: NO_ZOD_LOCALES } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: NO_ZOD_LOCALES }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/**
 * Bundles functions/lambda.ts into one minified ESM file, `<outdir>/index.mjs`, with every
 * dependency inside (the AWS SDK too: the runtime's copy may lag the version we test against),
 * copies the Swagger UI files `/docs` serves into `<outdir>/swagger-ui/` and builds the console
 * `/dashboard` serves into `<outdir>/dashboard/` (functions/system/docs.ts and dashboard.ts look
 * for them there, beside the module).
 */
export async function buildLambdaBundle(outdir: string): Promise<LambdaBundle> {
  const target = resolve(outdir);
  await rm(target, { recursive: true, force: true });
  await mkdir(target, { recursive: true });
  const file = join(target, 'index.mjs');
  await build({
    entryPoints: [join(root, 'functions', 'lambda.ts')],
    outfile: file,
    bundle: true,
    minify: true,
    platform: 'node',
    // ESM builds first: zod and the AWS SDK then tree-shake (their CommonJS builds do not),
    // which keeps the bundle well under Lambda's cold-start budget.
    mainFields: ['module', 'main'],
    target: 'node22',
    format: 'esm',
    legalComments: 'none',
    // Parts of the AWS SDK are CommonJS and call require() for node builtins, which an ESM
    // bundle lacks ("Dynamic require of "node:https" is not supported").
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    plugins: [builtinsViaRequire, withoutZodLocales],
    logLevel: 'warning',
  });
  const assetDir = join(target, BUNDLED_ASSET_FOLDER);
  await mkdir(assetDir);
  const packageFolder = swaggerUiPackageFolder();
  for (const name of [...Object.keys(SWAGGER_UI_ASSETS), ...SWAGGER_UI_LICENSE_FILES]) {
    await copyFile(join(packageFolder, name), join(assetDir, name));
  }
  const dashboardDir = join(target, BUNDLED_DASHBOARD_FOLDER);
  await writeDashboard(dashboardDir);
  return { outdir: target, file, bytes: (await stat(file)).size, assetDir, dashboardDir };
}
