import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mediaObjectKey } from '../../core/keys.js';
import type { LazyLog } from '../../core/lazy-child.js';
import { putStream, type MediaStore } from '../../core/media-store.js';
import type { Media } from '../../core/schemas/media.js';
import type { Message } from '../../core/schemas/message.js';
import { putMedia } from '../../core/store/media.js';
import type { Table } from '../../core/store/table.js';
import type { MediaDescriptor } from './map-message.js';

/**
 * The media id of a message's media, derived from the message id: a redelivered message maps
 * to the same S3 object and Media item instead of orphaning a second copy.
 */
function mediaIdFor(accountId: string, messageId: string): string {
  return createHash('sha256').update(`${accountId}\n${messageId}`).digest('hex').slice(0, 32);
}

/**
 * Streams a message's decrypted media into S3 (never whole in memory), counting its bytes,
 * then records the Media item that the media endpoint serves (Content-Type, Content-Length).
 * `signal` aborts both the download stream and the multipart upload (a stalled media host).
 */
async function storeMessageMedia(
  deps: { table: Table; mediaStore: MediaStore },
  accountId: string,
  messageId: string,
  descriptor: MediaDescriptor,
  body: Readable,
  signal?: AbortSignal,
): Promise<Media> {
  const mediaId = mediaIdFor(accountId, messageId);
  const s3Key = mediaObjectKey(accountId, mediaId);
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await Promise.all([
      pipeline(body, counter, ...(signal ? [{ signal }] : [])),
      putStream(deps.mediaStore, s3Key, counter, { contentType: descriptor.mimetype, ...(signal ? { signal } : {}) }),
    ]);
  } catch (error) {
    // Whichever side failed, the other must not stay blocked on backpressure.
    body.destroy();
    counter.destroy();
    throw error;
  }
  const media: Media = {
    mediaId,
    messageId,
    s3Key,
    mimetype: descriptor.mimetype,
    size,
    ...(descriptor.fileName ? { fileName: descriptor.fileName } : {}),
  };
  await putMedia(deps.table, accountId, media);
  return media;
}

/**
 * Downloads a new message's media (`download`) into S3 with its Media item, within `timeoutMs`,
 * and notes the outcome on `message`: its mediaId, or why there is none (`mediaError`).
 */
export async function attachMessageMedia(
  deps: { table: Table; mediaStore: MediaStore },
  accountId: string,
  message: Message,
  descriptor: MediaDescriptor,
  download: () => Promise<Readable>,
  timeoutMs: number,
  log: LazyLog,
): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const body = await abortable(download(), signal);
    const stored = await storeMessageMedia(deps, accountId, message.messageId, descriptor, body, signal);
    message.mediaId = stored.mediaId;
    message.fileLength ??= stored.size;
  } catch (error) {
    // The message itself must not be lost: it is kept with hasMedia, no mediaId and a note.
    message.mediaError = signal.aborted ? 'media download timed out' : 'media could not be downloaded';
    log.warn({ err: error, type: message.type }, 'media download failed; message stored without media');
  }
}

/** Rejects with the signal's reason when it aborts first; a late stream is destroyed. */
function abortable(download: Promise<Readable>, signal: AbortSignal): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    download.then(
      (stream) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) stream.destroy();
        else resolve(stream);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
