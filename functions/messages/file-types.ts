import { fileTypeFromBuffer } from 'file-type/core';
import { ValidationError } from '../../core/errors.js';
import type { MediaKind } from '../../core/schemas/command.js';

/** Bytes file-type needs to recognise every format it knows. */
export const SNIFF_BYTES = 4100;

/** What an upload is for: a media send, or a sticker. */
export type UploadKind = MediaKind | 'sticker';

interface Rule {
  /** Detected MIME type -> the MIME type we send on. */
  accepted: Record<string, string>;
  message: string;
}

const OFFICE = 'application/vnd.openxmlformats-officedocument';
const OPEN_DOCUMENT = 'application/vnd.oasis.opendocument';

/** The table of accepted types per send (docs/api.md), by the bytes of the file (never its name). */
const RULES: Record<UploadKind, Rule> = {
  image: {
    accepted: { 'image/jpeg': 'image/jpeg', 'image/png': 'image/png', 'image/gif': 'image/gif' },
    message: 'image must be a JPG, PNG or GIF file',
  },
  video: {
    accepted: { 'video/mp4': 'video/mp4', 'video/x-m4v': 'video/mp4', 'video/webm': 'video/webm' },
    message: 'video must be an MP4 or WebM file',
  },
  audio: {
    accepted: {
      'audio/mpeg': 'audio/mpeg',
      'audio/x-m4a': 'audio/mp4',
      'audio/mp4': 'audio/mp4',
      'audio/ogg': 'audio/ogg',
      'audio/ogg; codecs=opus': 'audio/ogg; codecs=opus',
      'audio/wav': 'audio/wav',
    },
    message: 'audio must be an MP3, M4A, OGG or WAV file',
  },
  document: {
    accepted: {
      'application/pdf': 'application/pdf',
      [`${OFFICE}.wordprocessingml.document`]: `${OFFICE}.wordprocessingml.document`,
      [`${OFFICE}.spreadsheetml.sheet`]: `${OFFICE}.spreadsheetml.sheet`,
      [`${OFFICE}.presentationml.presentation`]: `${OFFICE}.presentationml.presentation`,
      [`${OPEN_DOCUMENT}.text`]: `${OPEN_DOCUMENT}.text`,
      [`${OPEN_DOCUMENT}.spreadsheet`]: `${OPEN_DOCUMENT}.spreadsheet`,
      [`${OPEN_DOCUMENT}.presentation`]: `${OPEN_DOCUMENT}.presentation`,
      'application/rtf': 'application/rtf',
      'application/epub+zip': 'application/epub+zip',
      'application/zip': 'application/zip',
      // Legacy .doc/.xls/.ppt are all Compound File Binary; refined by extension below.
      'application/x-cfb': 'application/x-cfb',
    },
    message: 'document must be a PDF, Office, OpenDocument, RTF, EPUB, ZIP or text file',
  },
  sticker: {
    accepted: { 'image/webp': 'image/webp', 'image/png': 'image/png', 'image/jpeg': 'image/jpeg', 'image/gif': 'image/gif' },
    message: 'sticker must be a WebP, PNG, JPG or GIF file',
  },
};

const LEGACY_OFFICE: Record<string, string> = {
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
};
const TEXT_TYPES: Record<string, string> = { csv: 'text/csv', json: 'application/json', md: 'text/markdown' };

const extensionOf = (fileName: string | undefined) => fileName?.split('.').pop()?.toLowerCase() ?? '';

/** Text files have no magic number: accept bytes that decode as UTF-8 without control bytes. */
function looksLikeText(head: Uint8Array): boolean {
  if (head.length === 0) return false;
  try {
    // A multi-byte character cut at the end of the sample is fine: drop the last 3 bytes.
    new TextDecoder('utf-8', { fatal: true }).decode(head.length > 3 ? head.subarray(0, head.length - 3) : head);
  } catch {
    return false;
  }
  return !head.some((byte) => byte < 0x09 || (byte > 0x0d && byte < 0x20 && byte !== 0x1b));
}

/** The MIME type to send, or a ValidationError naming what the operation accepts. */
export async function detectMediaType(kind: UploadKind, head: Uint8Array, fileName?: string): Promise<string> {
  const rule = RULES[kind];
  const detected = await fileTypeFromBuffer(head);
  const mime = detected ? rule.accepted[detected.mime] : undefined;
  if (mime === 'application/x-cfb') return LEGACY_OFFICE[extensionOf(fileName)] ?? 'application/octet-stream';
  if (mime) return mime;
  if (kind === 'document' && !detected && looksLikeText(head)) return TEXT_TYPES[extensionOf(fileName)] ?? 'text/plain';
  throw new ValidationError(rule.message);
}
