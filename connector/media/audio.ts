import { open } from 'node:fs/promises';
import { runFfmpeg } from './ffmpeg.js';

/**
 * What WhatsApp sends audio as, voice notes and audio files alike: Opus in an Ogg container at
 * 48 kHz. Every client plays it, where WAV and some OGG (Vorbis) uploads are not playable there.
 */
export const OGG_OPUS_MIMETYPE = 'audio/ogg; codecs=opus';

const OPUS_SAMPLE_RATE = 48_000;

/**
 * Converts any audio ffmpeg can read to an OGG/Opus voice note (mono, 48 kHz, 32 kb/s, tuned for
 * speech as phones record them) at `outputPath`, and returns its duration in whole seconds (at
 * least 1), read from the Ogg stream itself so no ffprobe is needed.
 */
export async function convertToVoiceNote(inputPath: string, outputPath: string): Promise<{ seconds: number }> {
  await runFfmpeg(inputPath, outputPath, (command) =>
    command
      .noVideo()
      .audioCodec('libopus')
      .audioChannels(1)
      .audioFrequency(OPUS_SAMPLE_RATE)
      .audioBitrate('32k')
      .outputOptions(['-application', 'voip', '-map_metadata', '-1'])
      .format('ogg'),
  );
  return { seconds: await wholeSeconds(outputPath) };
}

/**
 * Converts any audio ffmpeg can read to a plain OGG/Opus audio file (not a voice note): two
 * channels (stereo kept, mono doubled, surround folded down, as clients play stereo at most),
 * 48 kHz, 128 kb/s, tuned for music rather than speech, since an audio file is often music that
 * a voice-note encoding would flatten.
 */
export async function convertToAudioFile(inputPath: string, outputPath: string): Promise<{ seconds: number }> {
  await runFfmpeg(inputPath, outputPath, (command) =>
    command
      .noVideo()
      .audioCodec('libopus')
      .audioFrequency(OPUS_SAMPLE_RATE)
      .audioBitrate('128k')
      .audioChannels(2)
      .outputOptions(['-application', 'audio', '-map_metadata', '-1'])
      .format('ogg'),
  );
  return { seconds: await wholeSeconds(outputPath) };
}

async function wholeSeconds(oggOpusPath: string): Promise<number> {
  return Math.max(1, Math.round(await oggOpusDurationSeconds(oggOpusPath)));
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
