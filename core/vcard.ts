/** A contact card as WhatsApp sends it: vCard 3.0 with the number as `waid`, which phones turn into a "Message" button. */
export function contactVcard(name: string, phone: string): string {
  const digits = phone.replace(/\D/g, '');
  return ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escapeText(name)}`, `TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`, 'END:VCARD'].join(
    '\n',
  );
}

/** vCard text values escape backslash, comma, semicolon and line breaks (RFC 6350 §3.4). */
function escapeText(value: string): string {
  return value.replace(/[\\,;]/g, (c) => `\\${c}`).replace(/\r?\n/g, '\\n');
}
