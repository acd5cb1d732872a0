import { ValidationError } from '../../core/errors.js';
import type { MediaKind } from '../../core/schemas/command.js';
import { jidSchema } from '../../core/schemas/jid.js';

const MAX_CAPTION_LENGTH = 1024;

/** The text fields of a media send, each checked as it is given. */
export interface MediaSendFields {
  to?: string;
  caption?: string;
  /** Audio only: true sends a voice note, false a plain audio file; absent, the default (voice note). */
  ptt?: boolean;
}

const toSchema = jidSchema('to');

function parseTo(value: string): string {
  const to = toSchema.safeParse(value);
  if (!to.success) throw new ValidationError(to.error.issues[0]?.message ?? 'Invalid request');
  return to.data;
}

const PTT_VALUES: Record<string, boolean> = { true: true, '1': true, false: false, '0': false };

/**
 * Checks the fields present so far and returns them parsed: a malformed `to`, an over-long
 * caption or a `ptt` that is not true/false/1/0 is a ValidationError whenever it is seen, even
 * before the file has arrived. Absent fields are not an error here (see requireMediaSendFields).
 */
export function readMediaSendFields(kind: MediaKind, fields: Record<string, string>): MediaSendFields {
  const parsed: MediaSendFields = {};
  if (fields.to?.trim()) parsed.to = parseTo(fields.to);
  if (kind !== 'audio') {
    const caption = fields.caption?.trim();
    if (caption && caption.length > MAX_CAPTION_LENGTH) {
      throw new ValidationError(`caption must be at most ${MAX_CAPTION_LENGTH} characters`);
    }
    if (caption) parsed.caption = caption;
  }
  if (kind === 'audio' && fields.ptt !== undefined) {
    const ptt = PTT_VALUES[fields.ptt.trim().toLowerCase()];
    if (ptt === undefined) throw new ValidationError('ptt must be true, false, 1 or 0');
    parsed.ptt = ptt;
  }
  return parsed;
}

/** The complete form: the parsed fields, with `to` and the file both required. */
export function requireMediaSendFields<F>(
  kind: MediaKind,
  fields: Record<string, string>,
  file: F | undefined,
): MediaSendFields & { to: string; file: F } {
  const parsed = readMediaSendFields(kind, fields);
  if (!file || !parsed.to) throw new ValidationError(`${kind} and to are required`);
  return { ...parsed, to: parsed.to, file };
}
