import type { Config } from '../../core/config.js';
import { parseWaVersion, type WaVersion } from '../../core/wa-version.js';
import type { NetworkOptions } from '../network/network-options.js';
import type { WaVersionKeeperDeps } from './wa-version-keeper.js';

/** WhatsApp Web's service worker: its text carries `"client_revision":<n>` (escaped or not), the revision the web client runs. */
const LIVE_WA_VERSION_URL = 'https://web.whatsapp.com/sw.js';
/** Baileys' defaults on its main branch: `const version = [2, 3000, <n>]`, the version its maintainers last moved to. */
const PUBLISHED_WA_VERSION_URL = 'https://raw.githubusercontent.com/WhiskeySockets/Baileys/master/src/Defaults/index.ts';

/**
 * What web.whatsapp.com answers a plain client with is not `sw.js`: it wants the headers a
 * browser sends when the user opened the address itself.
 */
const BROWSER_HEADERS = {
  'sec-fetch-site': 'none',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
};
/** Either page is well under this (sw.js about 100 KB); more is not the page we asked for. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

const CLIENT_REVISION = /\\?"client_revision\\?":\s*(\d{1,12})/;
const PUBLISHED_VERSION = /const\s+version\s*=\s*\[\s*(\d{1,4})\s*,\s*(\d{1,6})\s*,\s*(\d{1,12})\s*\]/;

/** The revision in a `sw.js`-shaped page, as the version WhatsApp Web announces (`2.3000.<revision>`). */
export function liveVersionIn(text: string): WaVersion | undefined {
  const match = CLIENT_REVISION.exec(text);
  return match ? [2, 3000, Number(match[1])] : undefined;
}

/** The version in a source file shaped like Baileys' defaults. */
export function publishedVersionIn(text: string): WaVersion | undefined {
  const match = PUBLISHED_VERSION.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Reads `url` and finds a version in it; throws with a reason a log line can carry. */
export async function fetchVersion(url: string, find: (text: string) => WaVersion | undefined, signal: AbortSignal): Promise<WaVersion> {
  const response = await fetch(url, { headers: BROWSER_HEADERS, signal, redirect: 'follow' });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_BODY_BYTES) {
    await response.body?.cancel();
    throw new Error(`answer of ${length} bytes`);
  }
  const version = find(await response.text());
  if (!version) throw new Error('no version in the answer');
  return version;
}

/**
 * Where the keeper reads the version: `WA_VERSION` pins it; the URLs given, else WhatsApp's and
 * Baileys' own, except against a sandbox, where nothing is read from the internet (the sandbox
 * serves its own `sw.js`, which `npm start -- --sandbox` gives as WA_VERSION_URL).
 */
export function waVersionSourcesFrom(
  config: Pick<Config, 'WA_VERSION' | 'WA_VERSION_URL' | 'WA_VERSION_PUBLISHED_URL'>,
  network: NetworkOptions['mode'],
): Pick<WaVersionKeeperDeps, 'setting' | 'liveUrl' | 'publishedUrl'> {
  const setting = config.WA_VERSION ? parseWaVersion(config.WA_VERSION) : undefined;
  const real = network === 'whatsapp';
  const liveUrl = config.WA_VERSION_URL ?? (real ? LIVE_WA_VERSION_URL : undefined);
  const publishedUrl = config.WA_VERSION_PUBLISHED_URL ?? (real ? PUBLISHED_WA_VERSION_URL : undefined);
  return { ...(setting ? { setting } : {}), ...(liveUrl ? { liveUrl } : {}), ...(publishedUrl ? { publishedUrl } : {}) };
}
