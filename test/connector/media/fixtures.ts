import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';

const execFileAsync = promisify(execFile);

/** Generates media with ffmpeg's lavfi sources into a temp directory the caller removes. */
export async function createFixtureDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'wa-media-test-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

async function generateFfmpeg(args: string[]): Promise<void> {
  await execFileAsync(ffmpegInstaller.path, ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
}

/** A sine tone of `seconds` seconds, 44.1 kHz stereo, as WAV or MP3 (by the path's extension). */
export async function generateTone(path: string, seconds: number): Promise<void> {
  await generateFfmpeg(['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${seconds}`, '-ac', '2', path]);
}

/** A 320x240 test-pattern video with a tone, `seconds` long (MP4 H.264/AAC, or WebM VP8 by extension). */
export async function generateVideo(path: string, seconds: number): Promise<void> {
  const codecs = path.endsWith('.webm') ? ['-c:v', 'libvpx', '-c:a', 'libopus'] : ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac'];
  await generateFfmpeg([
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=320x240:rate=10:duration=${seconds}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:duration=${seconds}`,
    ...codecs,
    '-shortest',
    path,
  ]);
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
