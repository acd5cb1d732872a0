import { crc32, deflateSync } from 'node:zlib';
import QRCode from 'qrcode-terminal/vendor/QRCode/index.js';

/**
 * A QR code as a module matrix, a PNG and an SVG, with no image library: the encoder is the one
 * qrcode-terminal draws the log's QR with (same error correction level, L, so the image and the
 * log show the same code), the PNG is written with node:zlib and the SVG by hand.
 */
const ERROR_CORRECTION_L = 1;
/** The quiet zone the QR standard asks for around the code, in modules. */
export const QUIET_ZONE = 4;
/** Pixels per module in the PNG: a version-10 code becomes a 520-pixel square. */
export const PNG_SCALE = 8;

/** `matrix[row][col]` is true for a dark module. */
export function qrMatrix(text: string): boolean[][] {
  const code = new QRCode(-1, ERROR_CORRECTION_L);
  // The encoder writes one byte per UTF-16 unit: give it the UTF-8 bytes as Latin-1 units.
  code.addData(Buffer.from(text, 'utf8').toString('latin1'));
  code.make();
  const size = code.getModuleCount();
  return Array.from({ length: size }, (_, row) => Array.from({ length: size }, (_, col) => code.isDark(row, col)));
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** A 1-bit grayscale PNG: black modules on white, with the quiet zone. */
export function qrPng(text: string): Buffer {
  const matrix = qrMatrix(text);
  const side = (matrix.length + 2 * QUIET_ZONE) * PNG_SCALE;
  const rowBytes = Math.ceil(side / 8);
  // Each row: filter type 0, then the pixels, 1 bit each, most significant first, 1 = white.
  const raw = Buffer.alloc((rowBytes + 1) * side, 0xff);
  for (let y = 0; y < side; y++) {
    const rowStart = y * (rowBytes + 1);
    raw[rowStart] = 0;
    const row = matrix[Math.floor(y / PNG_SCALE) - QUIET_ZONE];
    for (let x = 0; x < side; x++) {
      if (row?.[Math.floor(x / PNG_SCALE) - QUIET_ZONE]) raw[rowStart + 1 + (x >> 3)]! &= ~(0x80 >> (x & 7));
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, grayscale, deflate, no filter method, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** An SVG of one path (a unit square per dark module), scalable, with the quiet zone. */
export function qrSvg(text: string): string {
  const matrix = qrMatrix(text);
  const side = matrix.length + 2 * QUIET_ZONE;
  let path = '';
  matrix.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (dark) path += `M${x + QUIET_ZONE} ${y + QUIET_ZONE}h1v1h-1z`;
    });
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" width="${side * PNG_SCALE}" height="${side * PNG_SCALE}" shape-rendering="crispEdges">` +
    `<rect width="${side}" height="${side}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`
  );
}
