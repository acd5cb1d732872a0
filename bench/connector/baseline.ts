/**
 * RSS of an empty connector (no account) as the container image runs it: bundled by esbuild with
 * the Dockerfile's flags (npm packages external, dynamic imports split into chunks), started with
 * plain node. The bench's own connector child runs under tsx, whose compiler adds ~30 MB.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { MB, rssOf, sleep } from './measure.js';
import { CONNECTOR_NODE_FLAGS } from '../../connector/node-flags.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export async function bundledEmptyConnectorRss(env: Record<string, string>, settleMs: number): Promise<number> {
  // Inside the repository (.tmp/ is ignored by git): the bundle finds node_modules as in the image.
  await mkdir(join(repoRoot, '.tmp'), { recursive: true });
  const outdir = await mkdtemp(join(repoRoot, '.tmp', 'connector-bundle-'));
  try {
    await build({
      entryPoints: [join(repoRoot, 'connector/main.ts')],
      bundle: true,
      splitting: true,
      platform: 'node',
      target: 'node22',
      format: 'esm',
      packages: 'external',
      outdir,
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    });
    const child = spawn(process.execPath, [...CONNECTOR_NODE_FLAGS, join(outdir, 'main.mjs')], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString('utf8').includes('"connector started"') && resolve());
      child.once('exit', (code) => reject(new Error(`bundled connector exited with ${code}`)));
    });
    await sleep(settleMs);
    const rss = rssOf(child.pid ?? -1);
    child.kill('SIGTERM');
    await exited;
    return rss;
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}

export const formatMb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
