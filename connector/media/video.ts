import { runFfmpeg } from './ffmpeg.js';

/** WhatsApp plays MP4 with H.264 video and AAC audio; other containers are converted to it. */
export const PLAYABLE_VIDEO_MIMETYPE = 'video/mp4';

export function needsVideoConversion(mimetype: string): boolean {
  return mimetype.split(';')[0]?.trim().toLowerCase() !== PLAYABLE_VIDEO_MIMETYPE;
}

/** Re-encodes a video (e.g. WebM) to an MP4 phones play: H.264 yuv420p, AAC, moov first. */
export async function convertToMp4(inputPath: string, outputPath: string): Promise<void> {
  await runFfmpeg(inputPath, outputPath, (command) =>
    command
      .videoCodec('libx264')
      .audioCodec('aac')
      .outputOptions([
        '-preset',
        'veryfast',
        '-crf',
        '26',
        '-pix_fmt',
        'yuv420p',
        // H.264 in yuv420p needs even dimensions.
        '-vf',
        'scale=trunc(iw/2)*2:trunc(ih/2)*2',
        '-movflags',
        '+faststart',
        '-map_metadata',
        '-1',
      ])
      .format('mp4'),
  );
}
