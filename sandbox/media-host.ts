import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { listenLocal } from './listen.js';
import type { TlsMaterial } from './certs.js';
import type { Logger } from './log.js';

const MAX_MEDIA_BYTES = 100 * 1024 * 1024;
const UPLOAD_PATH = /^\/mms\/[a-z0-9-]+\/[A-Za-z0-9_-]+={0,2}$/;
const DOWNLOAD_PATH = /^\/m\/([a-f0-9]{32})$/;

/** Where uploaded (already encrypted) media blobs live: files under the data dir, or memory. */
interface BlobStore {
  put(id: string, data: Buffer): Promise<void>;
  get(id: string): Promise<Buffer | undefined>;
  delete(id: string): Promise<void>;
}

function blobStore(dir: string | undefined): BlobStore {
  if (!dir) {
    const blobs = new Map<string, Buffer>();
    return {
      put: async (id, data) => void blobs.set(id, data),
      get: async (id) => blobs.get(id),
      delete: async (id) => void blobs.delete(id),
    };
  }
  mkdirSync(dir, { recursive: true });
  return {
    put: (id, data) => writeFile(join(dir, id), data),
    get: async (id) => readFile(join(dir, id)).catch(() => undefined),
    delete: (id) => rm(join(dir, id), { force: true }),
  };
}

/** What the phones upload to the media host directly, as WhatsApp's phone uploads to its CDN. */
export interface MediaUploads {
  /** Stores an encrypted blob; where it is served. */
  upload(blob: Buffer): Promise<{ url: string; directPath: string }>;
  /**
   * The host no longer serves the blob at `directPath`, as WhatsApp's CDN forgets old media;
   * `phoneKeeps`: the phone still has the file and can upload it again (`reupload`).
   */
  expire(directPath: string, phoneKeeps: boolean): Promise<boolean>;
  /** The phone uploads again a file the host forgot (a media retry); where it is served now. */
  reupload(directPath: string): Promise<{ url: string; directPath: string } | undefined>;
}

export interface MediaHost extends MediaUploads {
  server: Server;
  /** `127.0.0.1:PORT`, what media_conn announces. */
  host: string;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_MEDIA_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Every account's profile picture: one small green JPEG (8×8), the same for all (and the image of seeded history). */
export const PROFILE_PICTURE = Buffer.from(
  '/9j/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAAIAAgDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAT/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFQEBAQAAAAAAAAAAAAAAAAAABAb/xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oADAMBAAIRAxEAPwCoANNP/9k=',
  'base64',
);
const PROFILE_PICTURE_PATH = /^\/pp\/[0-9]{1,20}\.jpg$/;

/** Where the media host serves the profile picture of the account with `phone`. */
export const profilePicturePath = (phone: string) => `/pp/${phone}.jpg`;

/**
 * The HTTPS media host (docs/sandbox-protocol.md §6): `POST /mms/TYPE/ENC_SHA256?auth&token` stores
 * the encrypted blob and answers `{url, direct_path}`; `GET /m/ID` serves it back (Range too).
 */
export async function startMediaHost(opts: {
  tls: TlsMaterial;
  port: number;
  anyPortIfTaken?: boolean;
  dir?: string;
  logger: Logger;
}): Promise<MediaHost> {
  const store = blobStore(opts.dir);
  let host = '';
  const keep = async (blob: Buffer) => {
    const id = randomBytes(16).toString('hex');
    await store.put(id, blob);
    return { url: `https://${host}/m/${id}`, directPath: `/m/${id}` };
  };
  /** Blobs the host forgot and the phones still have, by the path they had (memory only). */
  const keptByPhones = new Map<string, Buffer>();
  const expire = async (directPath: string, phoneKeeps: boolean) => {
    const id = DOWNLOAD_PATH.exec(directPath)?.[1];
    const blob = id ? await store.get(id) : undefined;
    if (!id || !blob) return false;
    await store.delete(id);
    if (phoneKeeps) keptByPhones.set(directPath, blob);
    return true;
  };
  const reupload = async (directPath: string) => {
    const blob = keptByPhones.get(directPath);
    if (!blob) return undefined;
    keptByPhones.delete(directPath);
    return keep(blob);
  };
  const server = createServer({ key: opts.tls.keyPem, cert: opts.tls.certPem }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://sandbox');
    const handle = async () => {
      if (req.method === 'POST' && UPLOAD_PATH.test(url.pathname)) {
        const body = await readBody(req);
        if (!body) return json(res, 413, { error: 'media too large' });
        const { url, directPath } = await keep(body);
        return json(res, 200, { url, direct_path: directPath });
      }
      if (req.method === 'GET' && PROFILE_PICTURE_PATH.test(url.pathname)) {
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': PROFILE_PICTURE.length });
        return res.end(PROFILE_PICTURE);
      }
      const match = DOWNLOAD_PATH.exec(url.pathname);
      if (req.method === 'GET' && match) {
        const blob = await store.get(match[1]!);
        if (!blob) return json(res, 404, { error: 'media not found' });
        const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
        if (range) {
          const start = Number(range[1]);
          const end = range[2] ? Math.min(Number(range[2]), blob.length - 1) : blob.length - 1;
          if (start > end) return json(res, 416, { error: 'bad range' });
          res.writeHead(206, {
            'content-type': 'application/octet-stream',
            'content-range': `bytes ${start}-${end}/${blob.length}`,
            'content-length': end - start + 1,
          });
          return res.end(blob.subarray(start, end + 1));
        }
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': blob.length });
        return res.end(blob);
      }
      return json(res, 404, { error: 'not found' });
    };
    handle().catch((err: unknown) => {
      opts.logger.warn({ err }, 'media request failed');
      if (!res.headersSent) json(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  host = `127.0.0.1:${await listenLocal(server, opts.port, opts.anyPortIfTaken)}`;
  return {
    server,
    host,
    upload: keep,
    expire,
    reupload,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
