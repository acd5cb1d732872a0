import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** The console's files as the browser loads them: one script, one stylesheet. */
export interface DashboardAssets {
  'app.js': Buffer;
  'app.css': Buffer;
}

/**
 * Bundles the console (dashboard/main.tsx: Preact, the generated API client, the styles) for
 * browsers, minified, in memory. Run from source the API builds it on first request; the Lambda
 * bundle and the container image carry it prebuilt (infra/build-lambda.ts, the Dockerfile).
 */
export async function buildDashboard(): Promise<DashboardAssets> {
  const result = await build({
    entryPoints: { app: join(root, 'dashboard', 'main.tsx') },
    outdir: '/dashboard-out',
    write: false,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    // Browsers of the last two years: no transform of what they all run natively.
    target: ['chrome120', 'firefox120', 'safari17'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'eof',
    logLevel: 'silent',
  });
  const file = (extension: string) => {
    const output = result.outputFiles.find((candidate) => candidate.path.endsWith(`app.${extension}`));
    if (!output) throw new Error(`the console's build produced no app.${extension}`);
    return Buffer.from(output.contents);
  };
  return { 'app.js': file('js'), 'app.css': file('css') };
}

/** Writes the built console into `outdir` (the folder functions/system/dashboard.ts looks for). */
export async function writeDashboard(outdir: string): Promise<DashboardAssets> {
  const assets = await buildDashboard();
  await mkdir(outdir, { recursive: true });
  await Promise.all(Object.entries(assets).map(([name, content]) => writeFile(join(outdir, name), content)));
  return assets;
}

// `tsx infra/build-dashboard.ts <outdir>`: the container image's build stage (Dockerfile).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  if (!outdir) throw new Error('usage: tsx infra/build-dashboard.ts <outdir>');
  await writeDashboard(outdir);
}
