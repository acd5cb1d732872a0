import type { Readable } from 'node:stream';

/** WhatsApp shows stickers as 512×512 WebP. */
const STICKER_SIZE = 512;

/**
 * The bytes of a sticker: a WebP is sent as is; a PNG or JPEG is fitted into 512×512 on a
 * transparent background and encoded as WebP.
 */
export async function stickerWebp(source: Readable, mimetype: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(Buffer.from(chunk as Uint8Array));
  const bytes = Buffer.concat(chunks);
  if (mimetype === 'image/webp') return bytes;
  // Loaded on first use, as in thumbnails.ts: sharp and libvips take ~25 MB an empty connector never needs.
  const { default: sharp } = await import('sharp');
  return sharp(bytes)
    .resize(STICKER_SIZE, STICKER_SIZE, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
    .webp()
    .toBuffer();
}
