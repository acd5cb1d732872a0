import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Runs `work` with a fresh private directory under os.tmpdir() and removes the directory
 * afterwards, whether `work` succeeded or threw.
 */
export async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'wa-media-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Streams `source` into `path` (never buffering it whole). */
export async function spoolToFile(source: Readable, path: string): Promise<void> {
  await pipeline(source, createWriteStream(path, { flags: 'wx' }));
}

/**
 * Opens `path` for reading and returns a stream over it that stays readable after the file
 * (and its directory) is removed: the open descriptor keeps the bytes alive on POSIX systems
 * until the stream ends or is destroyed, so a temp directory can be cleaned up at once while
 * Baileys still reads the result later.
 */
export async function openDetachedReadStream(path: string): Promise<Readable> {
  const handle = await open(path, 'r');
  return handle.createReadStream({ autoClose: true });
}
