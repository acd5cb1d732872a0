import { Readable } from 'node:stream';
import busboy from 'busboy';
import { PayloadTooLargeError, ValidationError } from '../core/errors.js';
import { deleteObject, putStream, type MediaStore } from '../core/media-store.js';
import { detectMediaType, SNIFF_BYTES } from './file-types.js';
import type { MediaKind } from '../core/schemas/command.js';

/** Room for the multipart boundaries and the small text fields beside the file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const MAX_FIELD_BYTES = 16 * 1024;

export interface StoredUpload {
  s3Key: string;
  mimetype: string;
  size: number;
  fileName?: string;
}

export interface ReceivedForm {
  fields: Record<string, string>;
  file?: StoredUpload;
}

export interface ReceiveOptions {
  kind: MediaKind;
  /** Form field that carries the file (`image`, `video`, ...). */
  fileField: string;
  s3Key: string;
  maxBytes: number;
  media: MediaStore;
}

export function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`File too large (max ${Math.floor(maxBytes / (1024 * 1024))} MB)`);
}

/**
 * Reads a multipart request as a stream: text fields are collected, the one file is sniffed from
 * its first bytes, then piped to S3 while its bytes are counted. Nothing is held beyond the sniff
 * sample and lib-storage's part buffers. Too large: PayloadTooLargeError as soon as the limit is
 * passed (or at once when Content-Length already says so); the upload is aborted.
 * The same code serves Lambda, whose body arrives whole but is read through the same stream.
 */
export async function receiveUpload(request: Request, options: ReceiveOptions): Promise<ReceivedForm> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data/i.test(contentType)) {
    throw new ValidationError('Request body must be multipart/form-data');
  }
  const declaredLength = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declaredLength > options.maxBytes + MULTIPART_OVERHEAD_BYTES) throw tooLarge(options.maxBytes);
  if (!request.body) throw new ValidationError(`${options.fileField} and to are required`);

  const source = Readable.fromWeb(request.body as import('node:stream/web').ReadableStream<Uint8Array>);
  const parser = busboy({
    headers: { 'content-type': contentType },
    limits: { files: 1, fileSize: options.maxBytes + 1, fields: 10, fieldSize: MAX_FIELD_BYTES, parts: 12 },
  });
  const fields: Record<string, string> = {};
  let fileTask: Promise<StoredUpload> | undefined;
  const abort = new AbortController();

  const parsed = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) reject(new ValidationError(`${name} is too long`));
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== options.fileField || fileTask) {
        stream.resume();
        return;
      }
      fileTask = storeFile(stream, info.filename, options, abort.signal);
      // Settles the request as soon as the file fails (too large, wrong type): no need to read on.
      fileTask.catch(reject);
    });
    parser.on('filesLimit', () => reject(new ValidationError('Only one file may be sent')));
    parser.on('error', (error: unknown) =>
      reject(error instanceof Error ? new ValidationError(`Malformed multipart body: ${error.message}`) : error),
    );
    parser.on('close', () => resolve());
    source.on('error', reject);
  });
  source.pipe(parser);

  try {
    await parsed;
    const file = fileTask ? await fileTask : undefined;
    return { fields, ...(file ? { file } : {}) };
  } catch (error) {
    abort.abort();
    source.unpipe(parser);
    source.destroy();
    // The object may exist if the failure came after the upload (e.g. a bad field).
    if (fileTask) await fileTask.then(() => deleteObject(options.media, options.s3Key)).catch(() => undefined);
    throw error;
  }
}

async function storeFile(
  stream: Readable,
  fileName: string | undefined,
  options: ReceiveOptions,
  signal: AbortSignal,
): Promise<StoredUpload> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const sample: Buffer[] = [];
  let sampled = 0;
  let ended = false;
  while (sampled < SNIFF_BYTES) {
    const next = await chunks.next();
    if (next.done) {
      ended = true;
      break;
    }
    sample.push(next.value);
    sampled += next.value.length;
  }
  const head = Buffer.concat(sample);
  if (head.length === 0) throw new ValidationError(`${options.fileField} is empty`);
  if (head.length > options.maxBytes) throw tooLarge(options.maxBytes);
  const mimetype = await detectMediaType(options.kind, head.subarray(0, SNIFF_BYTES), fileName);

  let size = head.length;
  async function* body(): AsyncGenerator<Buffer> {
    yield head;
    if (ended) return;
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      size += next.value.length;
      if (size > options.maxBytes) throw tooLarge(options.maxBytes);
      yield next.value;
    }
  }
  const counted = Readable.from(body());
  let failure: unknown;
  counted.on('error', (error) => {
    failure = error;
  });
  try {
    await putStream(options.media, options.s3Key, counted, { contentType: mimetype, signal });
  } catch (error) {
    // lib-storage reports the body's own error in its own words; keep ours (413, not 500).
    throw failure ?? error;
  }
  if (failure) throw failure;
  return { s3Key: options.s3Key, mimetype, size, ...(fileName ? { fileName } : {}) };
}
