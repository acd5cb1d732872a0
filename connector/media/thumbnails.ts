import { join } from 'node:path';
import { runFfmpeg } from './ffmpeg.js';

/** WhatsApp's inline preview: a tiny JPEG, 32 px wide, shown blurred until the media loads. */
const THUMBNAIL_WIDTH = 32;

export interface ImageInfo {
  /** Base64 JPEG, the form Baileys' `jpegThumbnail` takes. */
  jpegThumbnail: string;
  width?: number;
  height?: number;
}

export interface VideoInfo extends ImageInfo {
  seconds?: number;
}

/** The JPEG thumbnail of an image file, upright (EXIF orientation applied), plus its size. */
export async function imageThumbnail(imagePath: string): Promise<ImageInfo> {
  // Loaded on first use: sharp and libvips take ~25 MB that a connector without media never needs.
  const { default: sharp } = await import('sharp');
  const metadata = await sharp(imagePath).metadata();
  const thumbnail = await sharp(imagePath)
    .rotate()
    .resize({ width: THUMBNAIL_WIDTH })
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 50 })
    .toBuffer();
  const rotated = (metadata.orientation ?? 1) >= 5;
  return {
    jpegThumbnail: thumbnail.toString('base64'),
    ...(metadata.width && metadata.height
      ? rotated
        ? { width: metadata.height, height: metadata.width }
        : { width: metadata.width, height: metadata.height }
      : {}),
  };
}

/**
 * The thumbnail of a video: its first frame extracted by ffmpeg (as PNG into `workDir`) and
 * reduced by sharp; also the video's size and duration as ffmpeg reported them.
 */
export async function videoThumbnail(videoPath: string, workDir: string): Promise<VideoInfo> {
  const framePath = join(workDir, 'frame.png');
  const run = await runFfmpeg(videoPath, framePath, (command) => command.seekInput(0).noAudio().frames(1).format('image2'));
  const { jpegThumbnail } = await imageThumbnail(framePath);
  return {
    jpegThumbnail,
    ...(run.videoSize ?? {}),
    ...(run.inputDurationSeconds !== undefined ? { seconds: Math.max(1, Math.round(run.inputDurationSeconds)) } : {}),
  };
}
