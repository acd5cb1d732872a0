import qrcodeTerminal from 'qrcode-terminal';
import { describe, expect, it } from 'vitest';
import { PNG_SCALE, QUIET_ZONE, qrMatrix, qrPng, qrSvg } from '../../core/qr-image.js';
import { modulesOfPng, modulesOfSvg, pngPixels } from '../support/png-modules.js';

/** Shaped like Baileys' QR text: ref, noise key, identity key, adv secret. */
const QR_TEXT =
  '2@Yc8b0QpZx0l1B7v2m5t3Kq9w8e7r6t5y4u3i2o1p0aSdFgHjKlZxCvBnM1234567890abcdefgh==,' +
  'aGVsbG8gbm9pc2Uga2V5IGZvciB0ZXN0cyAxMjM0NQ==,aWRlbnRpdHkga2V5IGZvciB0ZXN0cyAxMjM0NTY3OA==,c2VjcmV0IGFkdg==';

/** The matrix qrcode-terminal draws in the log (its non-small form: two characters per module). */
function terminalMatrix(text: string): boolean[][] {
  let drawing = '';
  qrcodeTerminal.generate(text, { small: false }, (output) => (drawing = output));
  const black = '\u001b[40m  \u001b[0m';
  const white = '\u001b[47m  \u001b[0m';
  const rows = drawing.split('\n').slice(1, -1);
  return rows.map((line) => {
    const cells: boolean[] = [];
    for (let i = 0; i < line.length; ) {
      if (line.startsWith(black, i)) {
        cells.push(true);
        i += black.length;
      } else if (line.startsWith(white, i)) {
        cells.push(false);
        i += white.length;
      } else throw new Error(`unexpected terminal output at ${i}`);
    }
    return cells.slice(1, -1);
  });
}

describe('QR images', () => {
  it('the matrix is the code the log draws (same encoder, same error correction)', () => {
    const matrix = qrMatrix(QR_TEXT);
    expect(matrix.length).toBeGreaterThanOrEqual(21);
    expect((matrix.length - 17) % 4).toBe(0);
    expect(matrix).toEqual(terminalMatrix(QR_TEXT));
  });

  it('finder patterns sit in three corners', () => {
    const matrix = qrMatrix(QR_TEXT);
    const n = matrix.length;
    for (const [row, col] of [
      [0, 0],
      [0, n - 7],
      [n - 7, 0],
    ] as const) {
      expect(matrix[row]![col]).toBe(true);
      expect(matrix[row + 1]![col + 1]).toBe(false);
      expect(matrix[row + 3]![col + 3]).toBe(true);
    }
    // The separator: a light row just below the top-left finder.
    expect(matrix[7]!.slice(0, 8)).toEqual(Array(8).fill(false));
  });

  it('PNG: decoded, its pixels are the module matrix with a white quiet zone', () => {
    const png = qrPng(QR_TEXT);
    const matrix = qrMatrix(QR_TEXT);
    const pixels = pngPixels(png);
    expect(pixels.width).toBe((matrix.length + 2 * QUIET_ZONE) * PNG_SCALE);
    expect(pixels.height).toBe(pixels.width);
    for (let i = 0; i < pixels.width; i++) {
      expect(pixels.dark(i, 0) || pixels.dark(0, i) || pixels.dark(i, pixels.height - 1)).toBe(false);
    }
    expect(modulesOfPng(png)).toEqual(matrix);
  });

  it('SVG: one square per dark module, the same matrix', () => {
    const svg = qrSvg(QR_TEXT);
    const matrix = qrMatrix(QR_TEXT);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1"/);
    expect(modulesOfSvg(svg, matrix.length)).toEqual(matrix);
  });

  it('text beyond ASCII is encoded as UTF-8 bytes (a different code from its ASCII look-alike)', () => {
    expect(qrMatrix('caf\u00e9')).not.toEqual(qrMatrix('cafe'));
    expect(qrMatrix('caf\u00e9')).toEqual(qrMatrix('caf\u00e9'));
  });
});
