import { open } from 'node:fs/promises';
import { runFfmpeg } from './ffmpeg.js';

/** What WhatsApp voice notes are: Opus in an Ogg container, mono, 48 kHz. */
export const VOICE_NOTE_MIMETYPE = 'audio/ogg; codecs=opus';

const OPUS_SAMPLE_RATE = 48_000;

/**
 * Converts any audio ffmpeg can read to an OGG/Opus voice note (mono, 48 kHz, libopus) at
 * `outputPath`, and returns its duration in whole seconds (at least 1), read from the Ogg
 * stream itself so no ffprobe is needed.
 */
export async function convertToVoiceNote(inputPath: string, outputPath: string): Promise<{ seconds: number }> {
  await runFfmpeg(inputPath, outputPath, (command) =>
    command
      .noVideo()
      .audioCodec('libopus')
      .audioChannels(1)
      .audioFrequency(OPUS_SAMPLE_RATE)
      .audioBitrate('32k')
      // Voice-optimised encoder settings, as phones record voice notes.
      .outputOptions(['-application', 'voip', '-map_metadata', '-1'])
      .format('ogg'),
  );
  const duration = await oggOpusDurationSeconds(outputPath);
  return { seconds: Math.max(1, Math.round(duration)) };
}

/**
 * Duration of an Ogg/Opus file: the granule position of the last page counts 48 kHz samples
 * including the encoder's pre-skip (RFC 7845 §4), which the OpusHead header gives.
 */
export async function oggOpusDurationSeconds(path: string): Promise<number> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(Math.min(size, 512));
    await file.read(head, 0, head.length, 0);
    const opusHead = head.indexOf('OpusHead');
    if (head.subarray(0, 4).toString('latin1') !== 'OggS' || opusHead < 0) {
      throw new Error('not an Ogg/Opus file');
    }
    const preSkip = head.readUInt16LE(opusHead + 10);

    // The last page header lies within the final 64 KiB (an Ogg page is at most ~65 KiB).
    const tailLength = Math.min(size, 70_000);
    const tail = Buffer.alloc(tailLength);
    await file.read(tail, 0, tailLength, size - tailLength);
    const lastPage = tail.lastIndexOf('OggS');
    if (lastPage < 0 || lastPage + 14 > tail.length) throw new Error('no Ogg page found');
    const granule = tail.readBigInt64LE(lastPage + 6);
    return Math.max(0, Number(granule) - preSkip) / OPUS_SAMPLE_RATE;
  } finally {
    await file.close();
  }
}
