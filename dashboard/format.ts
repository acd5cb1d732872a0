/** Times and sizes as a person reads them, in the browser's language and time zone. */
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateAndTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function when(ms: number | string | undefined): string {
  if (ms === undefined) return '';
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return '';
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay ? timeOnly.format(date) : dateAndTime.format(date);
}

export function size(bytes: number | undefined): string {
  if (bytes === undefined) return '';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A JID as a person reads it: +<number> for people, the JID itself otherwise. */
export function personOf(jid: string): string {
  const number = /^(\d+)(?::\d+)?@s\.whatsapp\.net$/.exec(jid)?.[1];
  return number ? `+${number}` : jid;
}
