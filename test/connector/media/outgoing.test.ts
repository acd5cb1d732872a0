import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOutgoingMediaContent } from '../../../connector/media/outgoing.js';
import { oggOpusDurationSeconds } from '../../../connector/media/audio.js';
import { createFixtureDir, generateTone, generateVideo, readAll } from './fixtures.js';

let fixtures: Awaited<ReturnType<typeof createFixtureDir>>;
/**
 * This file's own temporary directory (os.tmpdir() reads TMPDIR at each call, and each test
 * file runs in a process of its own): other files converting media at the same moment leave
 * their working directories elsewhere, so counting ours sees only this file's.
 */
let ownTmp: string;
const tmpBefore = process.env.TMPDIR;

beforeAll(async () => {
  fixtures = await createFixtureDir();
  ownTmp = await mkdtemp(join(tmpdir(), 'wa-media-test-own-'));
  process.env.TMPDIR = ownTmp;
});
afterAll(async () => {
  if (tmpBefore === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpBefore;
  await rm(ownTmp, { recursive: true, force: true });
  await fixtures.remove();
});

/** The Readable Baileys would read, from `{stream}` content. */
function uploadStream(upload: unknown): Readable {
  expect(upload).toHaveProperty('stream');
  return (upload as { stream: Readable }).stream;
}

async function ourTempDirs(): Promise<string[]> {
  return (await readdir(tmpdir())).filter((name) => name.startsWith('wa-media-') && !name.startsWith('wa-media-test-'));
}

function expectOggOpus(bytes: Buffer): void {
  expect(bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
  expect(bytes.indexOf('OpusHead')).toBeGreaterThan(0);
}

describe('buildOutgoingMediaContent: audio becomes a voice note', () => {
  it('converts a WAV stream to mono 48 kHz OGG/Opus with ptt and seconds', async () => {
    const wav = join(fixtures.dir, 'tone.wav');
    await generateTone(wav, 3);
    const content = await buildOutgoingMediaContent({ kind: 'audio', source: createReadStream(wav), mimetype: 'audio/wav' });

    expect(content).toMatchObject({ ptt: true, mimetype: 'audio/ogg; codecs=opus', seconds: 3 });
    const waveform = (content as { waveform?: Uint8Array }).waveform;
    expect(waveform).toHaveLength(64);
    expect(Math.max(...(waveform ?? []))).toBe(100);
    const bytes = await readAll(uploadStream((content as { audio: unknown }).audio));
    expectOggOpus(bytes);
    const opusHead = bytes.indexOf('OpusHead');
    expect(bytes[opusHead + 9]).toBe(1); // channel count: mono
    expect(bytes.readUInt32LE(opusHead + 12)).toBe(48_000); // input sample rate
  });

  it('converts an MP3 file path and leaves the caller file in place', async () => {
    const mp3 = join(fixtures.dir, 'tone.mp3');
    await generateTone(mp3, 2);
    const content = await buildOutgoingMediaContent({ kind: 'audio', source: mp3, mimetype: 'audio/mpeg' });

    expect(content).toMatchObject({ ptt: true, seconds: 2 });
    expectOggOpus(await readAll(uploadStream((content as { audio: unknown }).audio)));
    await expect(readFile(mp3)).resolves.toBeInstanceOf(Buffer);
  });

  it('sends plain audio when ptt is false: OGG/Opus kept in stereo, no voice-note waveform', async () => {
    const wav = join(fixtures.dir, 'plain.wav');
    await generateTone(wav, 1);
    const content = await buildOutgoingMediaContent({ kind: 'audio', source: wav, mimetype: 'audio/wav', ptt: false });
    expect(content).toMatchObject({ ptt: false, mimetype: 'audio/ogg; codecs=opus', seconds: 1 });
    expect(content).not.toHaveProperty('waveform');
    const bytes = await readAll(uploadStream((content as { audio: unknown }).audio));
    expectOggOpus(bytes);
    expect(bytes[bytes.indexOf('OpusHead') + 9]).toBe(2); // channel count: the stereo tone stays stereo
  });

  it('removes its temp directory once the content is built', async () => {
    const wav = join(fixtures.dir, 'short.wav');
    await generateTone(wav, 1);
    const before = await ourTempDirs();
    const content = await buildOutgoingMediaContent({ kind: 'audio', source: createReadStream(wav), mimetype: 'audio/wav' });
    expect(await ourTempDirs()).toEqual(before);
    // The detached stream still yields the whole voice note.
    expectOggOpus(await readAll(uploadStream((content as { audio: unknown }).audio)));
  });

  it('rejects input that is not audio, without leaving files behind', async () => {
    const before = await ourTempDirs();
    await expect(
      buildOutgoingMediaContent({ kind: 'audio', source: Readable.from([Buffer.from('not audio at all')]), mimetype: 'audio/wav' }),
    ).rejects.toThrow();
    expect(await ourTempDirs()).toEqual(before);
  });
});

describe('oggOpusDurationSeconds', () => {
  it('reads the duration from the last granule position minus pre-skip', async () => {
    const wav = join(fixtures.dir, 'five.wav');
    await generateTone(wav, 5);
    const content = await buildOutgoingMediaContent({ kind: 'audio', source: wav, mimetype: 'audio/wav' });
    const ogg = join(fixtures.dir, 'five.ogg');
    await writeFile(ogg, await readAll(uploadStream((content as { audio: unknown }).audio)));
    expect(await oggOpusDurationSeconds(ogg)).toBeCloseTo(5, 1);
  });
});

describe('buildOutgoingMediaContent: image', () => {
  it('adds a small valid JPEG thumbnail and the dimensions, bytes unchanged', async () => {
    const png = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    const content = await buildOutgoingMediaContent({ kind: 'image', source: Readable.from([png]), mimetype: 'image/png', caption: 'hi' });

    expect(content).toMatchObject({ mimetype: 'image/png', caption: 'hi', width: 640, height: 480 });
    const thumbnail = Buffer.from((content as { jpegThumbnail: string }).jpegThumbnail, 'base64');
    expect(thumbnail.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    const meta = await sharp(thumbnail).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.width).toBe(32);
    expect(meta.height).toBe(24);
    expect(await readAll(uploadStream((content as { image: unknown }).image))).toEqual(png);
  });

  it('rejects bytes that are not an image', async () => {
    await expect(
      buildOutgoingMediaContent({ kind: 'image', source: Readable.from([Buffer.from('nope')]), mimetype: 'image/png' }),
    ).rejects.toThrow();
  });
});

describe('buildOutgoingMediaContent: video', () => {
  it('takes the thumbnail from a frame of an MP4 and keeps its bytes', async () => {
    const mp4 = join(fixtures.dir, 'clip.mp4');
    await generateVideo(mp4, 2);
    const content = await buildOutgoingMediaContent({ kind: 'video', source: createReadStream(mp4), mimetype: 'video/mp4' });

    expect(content).toMatchObject({ mimetype: 'video/mp4', width: 320, height: 240, seconds: 2 });
    const thumbnail = Buffer.from((content as { jpegThumbnail: string }).jpegThumbnail, 'base64');
    const meta = await sharp(thumbnail).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.width).toBe(32);
    expect(await readAll(uploadStream((content as { video: unknown }).video))).toEqual(await readFile(mp4));
  });

  it('re-encodes a WebM to MP4', async () => {
    const webm = join(fixtures.dir, 'clip.webm');
    await generateVideo(webm, 1);
    const content = await buildOutgoingMediaContent({ kind: 'video', source: webm, mimetype: 'video/webm' });

    expect(content).toMatchObject({ mimetype: 'video/mp4', width: 320, height: 240 });
    const bytes = await readAll(uploadStream((content as { video: unknown }).video));
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
  });
});

describe('buildOutgoingMediaContent: document', () => {
  it('keeps mimetype, fileName and caption and passes the stream through', async () => {
    const source = Readable.from([Buffer.from('%PDF-1.4 test')]);
    const content = await buildOutgoingMediaContent({
      kind: 'document',
      source,
      mimetype: 'application/pdf',
      fileName: 'report.pdf',
      caption: 'the report',
    });
    expect(content).toMatchObject({ mimetype: 'application/pdf', fileName: 'report.pdf', caption: 'the report' });
    expect((content as { document: { stream: Readable } }).document.stream).toBe(source);
  });
});
