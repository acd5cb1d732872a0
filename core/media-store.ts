import type { Readable } from 'node:stream';
import { DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { AwsClients } from './aws.js';
import type { Config } from './config.js';

/**
 * Media bytes in S3. Bodies move as streams: lib-storage uploads in 5 MB parts, so memory stays
 * flat whatever the file size.
 */
export interface MediaStore {
  bucket: string;
  s3: S3Client;
}

export function mediaStoreOf(config: Pick<Config, 'MEDIA_BUCKET'>, clients: Pick<AwsClients, 's3'>): MediaStore {
  return { bucket: config.MEDIA_BUCKET, s3: clients.s3 };
}

export type UploadBody = Readable | ReadableStream<Uint8Array> | Uint8Array | string;

export interface PutStreamOptions {
  contentType: string;
  /** Aborts the upload; parts already sent are discarded (AbortMultipartUpload) before it settles. */
  signal?: AbortSignal;
}

export async function putStream(store: MediaStore, key: string, body: UploadBody, options: PutStreamOptions): Promise<void> {
  // Loaded on the first upload: a connector or function that stores no media does not load it.
  const { Upload } = await import('@aws-sdk/lib-storage');
  const upload = new Upload({
    client: store.s3,
    params: { Bucket: store.bucket, Key: key, Body: body, ContentType: options.contentType },
    // One part in flight while the next fills: an upload holds at most two 5 MB parts (S3's
    // minimum part size) in memory, however large the file or however slow the store.
    queueSize: 1,
    partSize: 5 * 1024 * 1024,
    leavePartsOnError: false,
  });
  // A stream body is failed rather than the Upload aborted: lib-storage then sends its
  // AbortMultipartUpload before done() settles, where abort() settles at once and cleans up later.
  const onAbort = () => {
    if (isNodeReadable(body)) body.destroy(abortReason(options.signal));
    else void upload.abort();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await upload.done();
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

function isNodeReadable(body: UploadBody): body is Readable {
  return typeof body === 'object' && 'destroy' in body && 'pipe' in body;
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : Object.assign(new Error('Upload aborted.'), { name: 'AbortError' });
}

export interface StoredObject {
  body: Readable;
  contentType: string;
  contentLength: number | undefined;
}

/** The object as a Node stream, or undefined when there is no such key. */
export async function getStream(store: MediaStore, key: string): Promise<StoredObject | undefined> {
  try {
    const result = await store.s3.send(new GetObjectCommand({ Bucket: store.bucket, Key: key }));
    if (!result.Body) return undefined;
    return {
      // In Node the SDK's body is an IncomingMessage, which is a Readable.
      body: result.Body as Readable,
      contentType: result.ContentType ?? 'application/octet-stream',
      contentLength: result.ContentLength,
    };
  } catch (error) {
    if (error instanceof Error && (error.name === 'NoSuchKey' || error.name === 'NotFound')) return undefined;
    throw error;
  }
}

export async function getBuffer(store: MediaStore, key: string): Promise<Buffer | undefined> {
  const object = await getStream(store, key);
  if (!object) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export async function deleteObject(store: MediaStore, key: string): Promise<void> {
  await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: key }));
}

/** Keys under a prefix (all pages). */
export async function listKeys(store: MediaStore, prefix: string): Promise<string[]> {
  return (await listObjects(store, prefix)).map((object) => object.key);
}

/** Objects under a prefix (all pages), with when each was stored. */
export async function listObjects(store: MediaStore, prefix: string): Promise<Array<{ key: string; lastModified?: Date }>> {
  const objects: Array<{ key: string; lastModified?: Date }> = [];
  let token: string | undefined;
  do {
    const page = await store.s3.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      if (object.Key) objects.push({ key: object.Key, ...(object.LastModified ? { lastModified: object.LastModified } : {}) });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return objects;
}

/** Deletes every object under a prefix, 1000 per request; returns how many. */
export async function deletePrefix(store: MediaStore, prefix: string): Promise<number> {
  return deleteKeys(store, await listKeys(store, prefix));
}

/** Deletes the objects of `keys`, 1000 per request; returns how many. */
export async function deleteKeys(store: MediaStore, keys: string[]): Promise<number> {
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    await store.s3.send(
      new DeleteObjectsCommand({
        Bucket: store.bucket,
        Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
      }),
    );
  }
  return keys.length;
}
