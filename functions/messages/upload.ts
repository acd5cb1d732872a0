import { Readable } from 'node:stream';
import busboy from 'busboy';
import { AccountNotConnectedError, ConflictError, PayloadTooLargeError, ValidationError } from '../../core/errors.js';
import { newUploadId } from '../../core/ids.js';
import { uploadObjectKey } from '../../core/keys.js';
import { deleteObject, putStream, type MediaStore } from '../../core/media-store.js';
import { detectMediaType, SNIFF_BYTES, type UploadKind } from './file-types.js';

/** Room for the multipart boundaries and the small text fields beside the file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const MAX_FIELD_BYTES = 16 * 1024;

interface ReceivedFile {
  mimetype: string;
  size: number;
  fileName?: string;
  /** Where the bytes are; absent when the file was only checked (no destination given). */
  s3Key?: string;
}

export interface ReceivedForm {
  fields: Record<string, string>;
  file?: ReceivedFile;
}

export interface ReceiveOptions {
  kind: UploadKind;
  /** Form field that carries the file (`image`, `video`, ...). */
  fileField: string;
  maxBytes: number;
  /**
   * Where the file goes once its type is known. Absent: the file is still sniffed and counted
   * (so a wrong type or size is still answered as such), but nothing is stored.
   */
  destination?: { media: MediaStore; s3Key: string };
  /**
   * Judges the text fields received so far; throws a ValidationError. Called when the file part
   * starts, before a byte of it is stored, so a bad field sent ahead of the file stores nothing.
   */
  checkFieldsSoFar?: (fields: Record<string, string>) => void;
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`File too large (max ${Math.floor(maxBytes / (1024 * 1024))} MB)`);
}

/**
 * The request's own claims, judged before a byte of the body is read: multipart with a boundary,
 * and a declared length within the limit.
 */
function checkUploadHeaders(headers: Headers, maxBytes: number): void {
  const contentType = headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) {
    throw new ValidationError('Request body must be multipart/form-data');
  }
  if (!/;\s*boundary=("[^"]+"|[^\s;]+)/i.test(contentType)) {
    throw new ValidationError('multipart/form-data needs a boundary in its Content-Type');
  }
  const declaredLength = Number(headers.get('content-length') ?? Number.NaN);
  if (declaredLength > maxBytes + MULTIPART_OVERHEAD_BYTES) throw tooLarge(maxBytes);
}

/**
 * Reads a multipart request as a stream: text fields are collected, the one file is sniffed from
 * its first bytes, then piped to S3 while its bytes are counted. Nothing is held beyond the sniff
 * sample and lib-storage's part buffers. Too large: PayloadTooLargeError as soon as the limit is
 * passed. Any failure (too large, wrong type, malformed body, a bad field) leaves nothing in S3,
 * and the rest of the body is read and dropped, so the connection stays in step with the client
 * until the answer is out (early-answer.ts closes it cleanly).
 * The same code serves Lambda, whose body arrives whole but is read through the same stream.
 */
export async function receiveUpload(request: Request, options: ReceiveOptions): Promise<ReceivedForm> {
  checkUploadHeaders(request.headers, options.maxBytes);
  if (!request.body) throw new ValidationError(`${options.fileField} and to are required`);

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': request.headers.get('content-type') ?? '' },
      limits: { files: 1, fileSize: options.maxBytes + 1, fields: 10, fieldSize: MAX_FIELD_BYTES, parts: 12 },
    });
  } catch (error) {
    throw new ValidationError(`Malformed multipart body: ${error instanceof Error ? error.message : String(error)}`);
  }

  const source = Readable.fromWeb(request.body as import('node:stream/web').ReadableStream<Uint8Array>);
  const fields: Record<string, string> = {};
  let fileTask: Promise<ReceivedFile> | undefined;
  const stopFile = new AbortController();

  const parsed = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) reject(new ValidationError(`${name} is too long`));
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      // A cut body fails the file stream too; the parser's own 'error' reports it.
      stream.on('error', () => undefined);
      if (name !== options.fileField || fileTask) {
        stream.resume();
        return;
      }
      try {
        options.checkFieldsSoFar?.(fields);
      } catch (error) {
        stream.resume();
        reject(error);
        return;
      }
      fileTask = receiveFile(stream, info.filename, options, stopFile.signal);
      // Ends the request as soon as the file fails (too large, wrong type): no need to read on.
      fileTask.catch(reject);
    });
    parser.on('filesLimit', () => reject(new ValidationError('Only one file may be sent')));
    parser.on('partsLimit', () => reject(new ValidationError('Too many form fields')));
    parser.on('fieldsLimit', () => reject(new ValidationError('Too many form fields')));
    parser.on('error', (error: unknown) =>
      reject(new ValidationError(`Malformed multipart body: ${error instanceof Error ? error.message : String(error)}`)),
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
    source.unpipe(parser);
    // Drop the rest of the body rather than destroying it: destroying the request stream closes
    // the socket under the answer.
    source.on('error', () => undefined);
    source.resume();
    parser.destroy();
    stopFile.abort(error);
    await discardStored(fileTask, options.destination);
    throw error;
  }
}

/** Once the file's upload has settled (aborted or done), makes sure no object is left. */
async function discardStored(fileTask: Promise<ReceivedFile> | undefined, destination: ReceiveOptions['destination']) {
  if (!fileTask || !destination) return;
  await fileTask.catch(() => undefined);
  await deleteObject(destination.media, destination.s3Key).catch(() => undefined);
}

async function receiveFile(
  stream: Readable,
  fileName: string | undefined,
  options: ReceiveOptions,
  stop: AbortSignal,
): Promise<ReceivedFile> {
  // Failing the file's own stream (rather than aborting lib-storage) fails the body S3 reads, so
  // lib-storage finishes its own cleanup, the AbortMultipartUpload of the parts already sent,
  // before the upload settles.
  const onStop = () => stream.destroy(stop.reason instanceof Error ? stop.reason : new Error('upload stopped'));
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  try {
    return await storeOrCount(stream, fileName, options);
  } finally {
    stop.removeEventListener('abort', onStop);
  }
}

async function storeOrCount(stream: Readable, fileName: string | undefined, options: ReceiveOptions): Promise<ReceivedFile> {
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
    if (options.destination) {
      await putStream(options.destination.media, options.destination.s3Key, counted, { contentType: mimetype });
    } else {
      for await (const chunk of counted) void chunk;
    }
  } catch (error) {
    // lib-storage reports the body's own error in its own words; keep ours (413, not 500).
    throw failure ?? error;
  }
  if (failure) throw failure;
  return {
    mimetype,
    size,
    ...(fileName ? { fileName } : {}),
    ...(options.destination ? { s3Key: options.destination.s3Key } : {}),
  };
}

/**
 * Where a media send's upload goes: stored only when it may be sent, that is when the account is
 * connected, or when the request has an Idempotency-Key (a retry answers like its first request
 * even once disconnected, and its file is hashed to tell it from another request). Otherwise the
 * file is checked and counted as usual, yet never stored.
 */
export function sendUploadDestination(
  media: MediaStore,
  account: { _id: string; currentStatus: string },
  idempotencyKey: string | undefined,
): ReceiveOptions['destination'] {
  return account.currentStatus === 'connected' || idempotencyKey !== undefined
    ? { media, s3Key: uploadObjectKey(account._id, newUploadId()) }
    : undefined;
}

/** A send refused before its command was enqueued leaves an upload that nothing reads: removed. */
export async function discardRefusedUpload(media: MediaStore, file: { s3Key?: string } | undefined, error: unknown): Promise<void> {
  const refused = error instanceof ValidationError || error instanceof ConflictError || error instanceof AccountNotConnectedError;
  if (refused && file?.s3Key) await deleteObject(media, file.s3Key);
}
