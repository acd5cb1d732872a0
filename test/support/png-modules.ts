import { inflateSync } from 'node:zlib';
import { PNG_SCALE, QUIET_ZONE } from '../../core/qr-image.js';

/**
 * Reads a 1-bit grayscale PNG (the only kind core/qr-image.ts writes) back into pixels, and
 * samples the centre of each QR module: the image as a scanner would see it, without a QR
 * decoder package.
 */
export function pngPixels(png: Buffer): { width: number; height: number; dark: (x: number, y: number) => boolean } {
  if (!png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 1 || data[9] !== 0) throw new Error('expected 1-bit grayscale');
    }
    if (type === 'IDAT') idat.push(data);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const rowBytes = Math.ceil(width / 8) + 1;
  if (raw.length !== rowBytes * height) throw new Error('pixel data does not match the header');
  return {
    width,
    height,
    dark: (x, y) => {
      if (raw[y * rowBytes] !== 0) throw new Error('only filter type 0 is expected');
      return (raw[y * rowBytes + 1 + (x >> 3)]! & (0x80 >> (x & 7))) === 0;
    },
  };
}

/** The module matrix a QR PNG shows (quiet zone excluded). */
export function modulesOfPng(png: Buffer): boolean[][] {
  const pixels = pngPixels(png);
  const modules = pixels.width / PNG_SCALE - 2 * QUIET_ZONE;
  const centre = (i: number) => (i + QUIET_ZONE) * PNG_SCALE + PNG_SCALE / 2;
  return Array.from({ length: modules }, (_, row) => Array.from({ length: modules }, (_, col) => pixels.dark(centre(col), centre(row))));
}

/** The module matrix an SVG of core/qr-image.ts draws (unit squares offset by the quiet zone). */
export function modulesOfSvg(svg: string, size: number): boolean[][] {
  const matrix = Array.from({ length: size }, () => Array.from({ length: size }, () => false));
  for (const [, x, y] of svg.matchAll(/M(\d+) (\d+)h1v1h-1z/g)) matrix[Number(y) - QUIET_ZONE]![Number(x) - QUIET_ZONE] = true;
  return matrix;
}
