import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mediaObjectKey } from '../../core/keys.js';
import { putStream, type MediaStore } from '../../core/media-store.js';
import type { Media } from '../../core/schemas/media.js';
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
export async function storeMessageMedia(
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
