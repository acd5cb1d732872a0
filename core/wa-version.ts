/**
 * The WhatsApp Web version a socket announces at login (`2.3000.1234567`: primary, secondary,
 * revision). WhatsApp refuses logins from revisions it considers too old (`<failure
 * reason="405"/>`), so the connectors resolve the current one at run time (docs/connector.md,
 * "When WhatsApp moves"). Shared by the connector, which resolves it, and the API, which reports it.
 */
export type WaVersion = readonly [number, number, number];

/** Where the version in use came from, best first: WhatsApp Web itself, the one Baileys publishes, the one pinned in the package, or `WA_VERSION`. */
export const WA_VERSION_SOURCES = ['live', 'published', 'pinned', 'setting'] as const;
export type WaVersionSource = (typeof WA_VERSION_SOURCES)[number];

const VERSION_TEXT = /^(\d{1,4})\.(\d{1,6})\.(\d{1,12})$/;

/** `2.3000.1234567` as a version, or undefined when it is not one. */
export function parseWaVersion(text: string): WaVersion | undefined {
  const match = VERSION_TEXT.exec(text.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

export const waVersionText = (version: WaVersion): string => version.join('.');

/** Negative when `a` is older than `b`, 0 when equal, positive when newer. */
export function compareWaVersions(a: WaVersion, b: WaVersion): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}
