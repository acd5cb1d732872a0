import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DASHBOARD_ASSETS } from '../functions/system/dashboard.js';
import { buildLambdaBundle } from '../infra/build-lambda.js';

export interface BundleFigures {
  /** Bytes of index.mjs, what a cold start loads. */
  bundleBytes: number;
  /** Each cold import, ms, ascending. */
  importMs: number[];
  /** The console beside the bundle: each file's bytes as built and gzipped as served. */
  console: Array<{ name: string; bytes: number; gzipped: number }>;
}

/**
 * Builds the Lambda bundle as `npm run synth` does and imports it in fresh Node processes, one
 * per sample (each import cold), with the environment the function needs to load; reads the
 * console's files from beside it.
 */
export async function measureLambdaBundle(samples = 5): Promise<BundleFigures> {
  const outdir = await mkdtemp(join(tmpdir(), 'wa-lambda-'));
  try {
    const bundle = await buildLambdaBundle(outdir);
    const script = `const t = performance.now(); await import(${JSON.stringify(bundle.file)}); console.log(performance.now() - t);`;
    const importMs = Array.from({ length: samples }, () =>
      Number(
        execFileSync(process.execPath, ['--input-type=module', '-e', script], {
          env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', LOG_LEVEL: 'silent' },
        })
          .toString()
          .trim(),
      ),
    ).sort((a, b) => a - b);
    const console = await Promise.all(
      Object.keys(DASHBOARD_ASSETS).map(async (name) => {
        const content = await readFile(join(bundle.dashboardDir, name));
        return { name, bytes: content.length, gzipped: gzipSync(content).length };
      }),
    );
    return { bundleBytes: bundle.bytes, importMs, console };
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}
