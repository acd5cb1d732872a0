import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Context } from 'hono';
import type { AppEnv } from '../http/services.js';

/**
 * Files this API serves to browsers (the `/docs` page's Swagger UI, the `/dashboard` console):
 * read or built once per process on first request, never at import (they would weigh on the
 * Lambda bundle's cold start), and sent gzipped to clients that take it.
 */

// The file names carry no version, so the URL does: a new file is a new URL, and an old one
// may be cached for good.
const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

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

/** Produces each asset (a file, or what is made of files) once; a failure is retried on the next request. */
export function assetCache<T = Buffer>(): (key: string, produce: () => Promise<T>) => Promise<T> {
  const cache = new Map<string, Promise<T>>();
  return (key, produce) => {
    let content = cache.get(key);
    if (!content) {
      content = produce();
      content.catch(() => cache.delete(key));
      cache.set(key, content);
    }
    return content;
  };
}

/**
 * Answers with one asset, gzipped when the client takes it. Compressed, the largest of them
 * (swagger-ui-bundle.js, 1.7 MB) fits the 1 MB response limit of a load balancer in front of
 * Lambda (docs/deploy-aws.md), and every transfer is a quarter of the size.
 */
export function assetResponder(remembered: ReturnType<typeof assetCache<Buffer>>) {
  return async (c: Context<AppEnv>, name: string, contentType: string, load: () => Promise<Buffer>) => {
    const headers = { 'Content-Type': contentType, 'Cache-Control': ASSET_CACHE_CONTROL, Vary: 'Accept-Encoding' };
    if (!acceptsGzip(c.req.header('accept-encoding'))) return c.body(new Uint8Array(await remembered(name, load)), 200, headers);
    const compressed = await remembered(`${name}.gz`, async () => gzipped(await remembered(name, load)));
    return c.body(new Uint8Array(compressed), 200, { ...headers, 'Content-Encoding': 'gzip' });
  };
}
