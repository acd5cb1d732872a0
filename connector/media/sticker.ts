import type { Readable } from 'node:stream';

/** WhatsApp shows stickers as 512×512 WebP. */
const STICKER_SIZE = 512;
const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

export interface Sticker {
  webp: Buffer;
  /** More than one frame: sent with `isAnimated`, which WhatsApp needs to play it. */
  animated: boolean;
}

/**
 * The bytes of a sticker: a 512×512 WebP is sent as is; anything else (WebP of another size,
 * PNG, JPEG, GIF) is fitted into 512×512 on a transparent background and encoded as WebP. An
 * animated WebP or GIF stays animated, every frame fitted, with its frame delays and loop.
 */
export async function stickerWebp(source: Readable): Promise<Sticker> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(Buffer.from(chunk as Uint8Array));
  const bytes = Buffer.concat(chunks);
  // Loaded on first use, as in thumbnails.ts: sharp and libvips take ~25 MB an empty connector never needs.
  const { default: sharp } = await import('sharp');
  // With `animated`, sharp reads every frame (stacked: height is pages × pageHeight).
  const image = sharp(bytes, { animated: true });
  const { format, width, height, pages = 1, pageHeight = height } = await image.metadata();
  const animated = pages > 1;
  if (format === 'webp' && width === STICKER_SIZE && pageHeight === STICKER_SIZE) return { webp: bytes, animated };
  const webp = await image.resize(STICKER_SIZE, STICKER_SIZE, { fit: 'contain', background: TRANSPARENT }).webp().toBuffer();
  return { webp, animated };
}
