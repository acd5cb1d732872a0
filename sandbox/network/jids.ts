/** JID helpers of the sandbox: every address is a phone number (PN) or a LID, per device. */
const S_WHATSAPP_NET = 's.whatsapp.net';

export interface ParsedJid {
  user: string;
  device: number;
  server: 's.whatsapp.net' | 'lid';
}

const JID_RE = /^([0-9]{1,20})(?::([0-9]{1,3}))?@(s\.whatsapp\.net|c\.us|lid)$/;

/** Parses a user or device JID of a person (PN or LID). Anything else gives undefined. */
export function parseUserJid(jid: string | undefined): ParsedJid | undefined {
  if (!jid) return undefined;
  const m = JID_RE.exec(jid);
  if (!m) return undefined;
  return {
    user: m[1]!,
    device: m[2] ? Number(m[2]) : 0,
    server: m[3] === 'lid' ? 'lid' : 's.whatsapp.net',
  };
}

export const pnJid = (phone: string, device = 0) => `${phone}${device ? `:${device}` : ''}@${S_WHATSAPP_NET}`;
export const lidJid = (lid: string, device = 0) => `${lid}${device ? `:${device}` : ''}@lid`;
