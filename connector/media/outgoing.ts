/**
 * Outgoing media: turns an uploaded file into the Baileys content of a media message.
 *
 *   buildOutgoingMediaContent({ kind, source, mimetype, fileName?, caption?, ptt? })
 *     -> Promise<AnyMessageContent>      (pass it to sock.sendMessage(jid, content))
 *
 * - image: sent as is, with a 32 px JPEG `jpegThumbnail` (sharp) and its width/height.
 * - video: MP4 sent as is, anything else (WebM) re-encoded to MP4; thumbnail from the first
 *   frame (ffmpeg, then sharp), width/height and `seconds`.
 * - audio: always converted to OGG/Opus (48 kHz, libopus), mimetype `audio/ogg; codecs=opus`,
 *   `seconds` from the Ogg granule position. By default a voice note (`ptt: true`: mono, speech
 *   settings, the 64-bar `waveform` phones draw); with `ptt: false` a plain audio file (stereo,
 *   128 kb/s, music settings, no waveform), shown as a playable file, not a voice message.
 * - document: sent as is, `mimetype` and `fileName` kept, `caption` when given.
 *
 * `source` is a Readable (e.g. the S3 object stream) or a path to a file the caller owns.
 * Work happens in a private directory under os.tmpdir() that is removed before this resolves;
 * media we produced is handed to Baileys as a stream over an already-unlinked file, so nothing
 * is left on disk whatever happens to the send. A caller that gives up on the returned content
 * without sending it should destroy its stream (`releaseOutgoingMediaContent`).
 */
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { AnyMessageContent, WAMediaUpload } from '@whiskeysockets/baileys';
import { convertToAudioFile, convertToVoiceNote, OGG_OPUS_MIMETYPE } from './audio.js';
import { openDetachedReadStream, spoolToFile, withTempDir } from './temp-files.js';
import { imageThumbnail, videoThumbnail } from './thumbnails.js';
import { convertToMp4, needsVideoConversion, PLAYABLE_VIDEO_MIMETYPE } from './video.js';
import { voiceNoteWaveform } from './waveform.js';

type OutgoingMediaKind = 'image' | 'video' | 'audio' | 'document';

export interface OutgoingMedia {
  kind: OutgoingMediaKind;
  source: Readable | string;
  mimetype: string;
  fileName?: string;
  caption?: string;
  /** Audio only: false sends a plain audio file (still OGG/Opus) instead of a voice note (the default). */
  ptt?: boolean;
}

export async function buildOutgoingMediaContent(media: OutgoingMedia): Promise<AnyMessageContent> {
  const caption = media.caption ? { caption: media.caption } : {};
  switch (media.kind) {
    case 'document':
      return {
        document: asUpload(media.source),
        mimetype: media.mimetype,
        ...(media.fileName ? { fileName: media.fileName } : {}),
        ...caption,
      };
    case 'image':
      return withLocalFile(media.source, 'image', async (path) => ({
        image: await detachedOrOwned(path, media.source),
        mimetype: media.mimetype,
        ...(await imageThumbnail(path)),
        ...caption,
      }));
    case 'video':
      return withLocalFile(media.source, 'video', async (path, dir) => {
        let videoPath = path;
        if (needsVideoConversion(media.mimetype)) {
          videoPath = join(dir, 'converted.mp4');
          await convertToMp4(path, videoPath);
        }
        const info = await videoThumbnail(videoPath, dir);
        return {
          video: videoPath === path ? await detachedOrOwned(path, media.source) : { stream: await openDetachedReadStream(videoPath) },
          mimetype: PLAYABLE_VIDEO_MIMETYPE,
          ...info,
          ...caption,
        };
      });
    case 'audio':
      return withLocalFile(media.source, 'audio', async (path, dir) => {
        const oggPath = join(dir, 'audio.ogg');
        if (media.ptt === false) {
          const { seconds } = await convertToAudioFile(path, oggPath);
          return {
            audio: { stream: await openDetachedReadStream(oggPath) },
            mimetype: OGG_OPUS_MIMETYPE,
            ptt: false,
            seconds,
          };
        }
        const { seconds } = await convertToVoiceNote(path, oggPath);
        const waveform = await voiceNoteWaveform(oggPath, join(dir, 'voice.pcm'));
        // Baileys copies `waveform` into the audioMessage (as its own computation would) but
        // does not declare it on AnyMessageContent; a variable, unlike a literal, may carry it.
        const content = {
          audio: { stream: await openDetachedReadStream(oggPath) },
          mimetype: OGG_OPUS_MIMETYPE,
          ptt: true,
          seconds,
          waveform,
        };
        return content;
      });
  }
}

/** Destroys any stream held by content that will not be sent, closing its file descriptor. */
export function releaseOutgoingMediaContent(content: AnyMessageContent): void {
  for (const key of ['image', 'video', 'audio', 'document'] as const) {
    const upload: unknown = (content as Partial<Record<typeof key, unknown>>)[key];
    if (upload && typeof upload === 'object' && 'stream' in upload) {
      (upload as { stream: Readable }).stream.destroy();
    }
  }
}

function asUpload(source: Readable | string): WAMediaUpload {
  return typeof source === 'string' ? { url: source } : { stream: source };
}

/**
 * Gives `work` a file path for the media: the caller's own path, or the Readable spooled into
 * a temp directory. The directory is removed when `work` settles.
 */
function withLocalFile<T>(source: Readable | string, baseName: string, work: (path: string, dir: string) => Promise<T>): Promise<T> {
  return withTempDir(async (dir) => {
    if (typeof source === 'string') return work(source, dir);
    const path = join(dir, baseName);
    await spoolToFile(source, path);
    return work(path, dir);
  });
}

/** A file the caller owns stays a path; a spooled temp file becomes a detached stream. */
async function detachedOrOwned(path: string, source: Readable | string): Promise<WAMediaUpload> {
  return typeof source === 'string' ? { url: source } : { stream: await openDetachedReadStream(path) };
}
