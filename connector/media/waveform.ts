import { readFile } from 'node:fs/promises';
import { runFfmpeg } from './ffmpeg.js';

/** WhatsApp draws a voice note as 64 bars, each 0..100. */
const BARS = 64;
const PCM_RATE = 8_000;

/**
 * The waveform of a voice note: the audio decoded by ffmpeg to 8 kHz mono 16-bit PCM (a small
 * file: 16 KB per second) and reduced to 64 mean-amplitude bars scaled to 0..100.
 */
export async function voiceNoteWaveform(audioPath: string, pcmPath: string): Promise<Uint8Array> {
  await runFfmpeg(audioPath, pcmPath, (command) =>
    command.noVideo().audioChannels(1).audioFrequency(PCM_RATE).audioCodec('pcm_s16le').format('s16le'),
  );
  const pcm = await readFile(pcmPath);
  return waveformFromPcm(pcm);
}

export function waveformFromPcm(pcm: Buffer): Uint8Array {
  const samples = Math.floor(pcm.length / 2);
  const perBar = Math.max(1, Math.floor(samples / BARS));
  const means: number[] = [];
  for (let bar = 0; bar < BARS; bar += 1) {
    let sum = 0;
    let count = 0;
    for (let i = bar * perBar; i < Math.min(samples, (bar + 1) * perBar); i += 1) {
      sum += Math.abs(pcm.readInt16LE(i * 2));
      count += 1;
    }
    means.push(count > 0 ? sum / count : 0);
  }
  const peak = Math.max(...means);
  return Uint8Array.from(means.map((mean) => (peak > 0 ? Math.floor((100 * mean) / peak) : 0)));
}
