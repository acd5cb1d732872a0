import { mkdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

export interface LambdaBundle {
  /** Directory holding the bundle, usable as a Lambda code asset. */
  outdir: string;
  /** The bundle file, `index.mjs` (handler `index.handler`). */
  file: string;
  bytes: number;
}

/**
 * Bundles functions/lambda.ts into one minified ESM file, `<outdir>/index.mjs`, with every
 * dependency inside (the AWS SDK too: the runtime's copy may lag the version we test against).
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
    logLevel: 'warning',
  });
  return { outdir: target, file, bytes: (await stat(file)).size };
}
