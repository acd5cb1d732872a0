/**
 * The smallest byte sequences that file-type recognises for each accepted format (headers
 * only: enough for type checks, not playable media).
 */
const ascii = (text: string) => Buffer.from(text, 'latin1');
const padded = (head: Buffer, size = 512) => Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length), 1)]);

function ftyp(brand: string): Buffer {
  const box = Buffer.alloc(24);
  box.writeUInt32BE(24, 0);
  ascii('ftyp').copy(box, 4);
  ascii(brand).copy(box, 8);
  box.writeUInt32BE(0, 12);
  ascii(brand).copy(box, 16);
  ascii('mp41').copy(box, 20);
  return box;
}

function oggOpus(): Buffer {
  const page = Buffer.alloc(28 + 19);
  ascii('OggS').copy(page, 0);
  page[4] = 0;
  page[5] = 2;
  page[26] = 1;
  page[27] = 19;
  ascii('OpusHead').copy(page, 28);
  page[36] = 1;
  return page;
}

function wav(): Buffer {
  const header = Buffer.alloc(44);
  ascii('RIFF').copy(header, 0);
  header.writeUInt32LE(36 + 400, 4);
  ascii('WAVE').copy(header, 8);
  ascii('fmt ').copy(header, 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  ascii('data').copy(header, 36);
  header.writeUInt32LE(400, 40);
  return header;
}

function webm(): Buffer {
  // EBML header with DocType "webm".
  return Buffer.from([
    0x1a,
    0x45,
    0xdf,
    0xa3,
    0x9f,
    0x42,
    0x86,
    0x81,
    0x01,
    0x42,
    0xf7,
    0x81,
    0x01,
    0x42,
    0xf2,
    0x81,
    0x04,
    0x42,
    0xf3,
    0x81,
    0x08,
    0x42,
    0x82,
    0x84,
    ...ascii('webm'),
    0x42,
    0x87,
    0x81,
    0x04,
    0x42,
    0x85,
    0x81,
    0x02,
  ]);
}

export const fixtures = {
  png: padded(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, ...ascii('IHDR')])),
  jpeg: padded(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, ...ascii('JFIF'), 0])),
  gif: padded(ascii('GIF89a')),
  mp4: padded(ftyp('isom')),
  webm: padded(webm()),
  m4a: padded(ftyp('M4A ')),
  // An empty ID3v2 tag followed by an MPEG-1 Layer III frame header.
  mp3: padded(Buffer.concat([ascii('ID3'), Buffer.from([3, 0, 0, 0, 0, 0, 0, 0xff, 0xfb, 0x90, 0x64])])),
  ogg: padded(oggOpus()),
  wav: padded(wav()),
  pdf: padded(ascii('%PDF-1.4\n%âãÏÓ\n')),
  text: Buffer.from('name,amount\nalice,3\n'),
  exe: padded(Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0, 0, 0, 0x04, 0, 0, 0, 0xff, 0xff])),
};
