import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PINNED_WA_VERSION } from '../../../connector/wa-version/pinned.js';
import { liveVersionIn, publishedVersionIn, waVersionSourcesFrom } from '../../../connector/wa-version/sources.js';
import { WaVersionKeeper, type WaVersionKeeperDeps } from '../../../connector/wa-version/wa-version-keeper.js';
import { WA_VERSION_KEY } from '../../../core/keys.js';
import { readWaVersion, writeWaVersion } from '../../../core/store/wa-version.js';
import type { WaVersion } from '../../../core/wa-version.js';
import { silentLogger, useTestStack } from '../../support/test-stack.js';

/** What WhatsApp Web's sw.js carries: the revision inside JSON embedded as an escaped string. */
const swJs = (revision: number) =>
  `self.__swData=JSON.parse(/*BTDS*/"{\\"dynamic_data\\":{\\"SiteData\\":{\\"client_revision\\":${revision}}}}");`;
/** What Baileys' Defaults/index.ts carries. */
const defaultsTs = (version: WaVersion) => `import { proto } from '../../WAProto';\n\nconst version = [${version.join(', ')}]\n`;

/** A page that answers `body` (or `status` with nothing) and counts the requests it got. */
interface Page {
  url: string;
  hits: number;
  body: string;
  status: number;
  close(): Promise<void>;
}

async function servePage(body: string, status = 200): Promise<Page> {
  const page = { hits: 0, body, status } as Page;
  const server: Server = createServer((_req, res) => {
    page.hits += 1;
    res.writeHead(page.status, { 'content-type': 'text/javascript' }).end(page.status === 200 ? page.body : '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  page.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sw.js`;
  page.close = () => new Promise((resolve) => server.close(() => resolve()));
  return page;
}

/** An address nothing listens on: a source that is down. */
async function deadUrl(): Promise<string> {
  const page = await servePage('');
  await page.close();
  return page.url;
}

const newer = (by: number): WaVersion => [PINNED_WA_VERSION[0], PINNED_WA_VERSION[1], PINNED_WA_VERSION[2] + by];

describe('the WhatsApp Web version: where it is read, stored and shared', () => {
  const ctx = useTestStack();
  const keepers: WaVersionKeeper[] = [];
  const pages: Page[] = [];
  let down: string;

  const start = async (deps: Omit<WaVersionKeeperDeps, 'table' | 'logger'>) => {
    const keeper = await WaVersionKeeper.start({ table: ctx.table, logger: silentLogger, ...deps });
    keepers.push(keeper);
    return keeper;
  };
  const page = async (body: string, status = 200) => {
    const served = await servePage(body, status);
    pages.push(served);
    return served;
  };

  beforeAll(async () => {
    down = await deadUrl();
  });
  afterEach(async () => {
    for (const keeper of keepers.splice(0)) keeper.stop();
    // Each case starts with nothing stored, as a new deployment does.
    await ctx.table.doc.send(new DeleteCommand({ TableName: ctx.table.name, Key: WA_VERSION_KEY }));
  });
  afterAll(async () => {
    await Promise.all(pages.map((served) => served.close()));
  });

  it('the pinned version is the one the pinned Baileys announces when given none', () => {
    expect(PINNED_WA_VERSION).toEqual(DEFAULT_CONNECTION_CONFIG.version);
  });

  it('finds the revision in a sw.js page (escaped or not) and the version in a Baileys defaults file', () => {
    expect(liveVersionIn(swJs(1_050_000_001))).toEqual([2, 3000, 1_050_000_001]);
    expect(liveVersionIn('{"client_revision": 1050000002}')).toEqual([2, 3000, 1_050_000_002]);
    expect(liveVersionIn('self.__swData = {}')).toBeUndefined();
    expect(publishedVersionIn(defaultsTs([2, 3000, 1_050_000_003]))).toEqual([2, 3000, 1_050_000_003]);
    expect(publishedVersionIn('const version = [2, 3000]')).toBeUndefined();
  });

  it('live first: its version is used and stored for the other connectors', async () => {
    const live = await page(swJs(newer(10)[2]));
    const keeper = await start({ liveUrl: live.url, publishedUrl: down });
    expect(keeper.current()).toMatchObject({ version: newer(10), source: 'live' });
    expect(await readWaVersion(ctx.table)).toMatchObject({ version: newer(10), source: 'live' });
    expect(live.hits).toBe(1);
  });

  it.each([
    ['down', 0, ''],
    ['answering 503', 503, ''],
    ['answering a page with no revision', 200, '<html>login</html>'],
  ])('live %s: the version Baileys publishes', async (_case, status, body) => {
    const live = status === 0 ? undefined : await page(body, status);
    const published = await page(defaultsTs(newer(5)));
    const keeper = await start({ liveUrl: live?.url ?? down, publishedUrl: published.url });
    expect(keeper.current()).toMatchObject({ version: newer(5), source: 'published' });
    expect(published.hits).toBe(1);
  });

  it('both down: the pinned version, stored as such; a stored pinned is not reused by the next connector', async () => {
    const published = await page('', 404);
    const first = await start({ liveUrl: down, publishedUrl: published.url });
    expect(first.current()).toMatchObject({ version: PINNED_WA_VERSION, source: 'pinned' });
    expect(await readWaVersion(ctx.table)).toMatchObject({ version: PINNED_WA_VERSION, source: 'pinned' });
    // No source answered that connector: the next one asks again.
    const live = await page(swJs(newer(7)[2]));
    const second = await start({ liveUrl: live.url });
    expect(second.current()).toMatchObject({ version: newer(7), source: 'live' });
    expect(live.hits).toBe(1);
  });

  it('a connector that starts within the period uses the version another one stored, without fetching', async () => {
    const live = await page(swJs(newer(20)[2]));
    const first = await start({ liveUrl: live.url });
    const second = await start({ liveUrl: live.url });
    expect(live.hits).toBe(1);
    expect(second.current()).toEqual(first.current());
  });

  it('a stored version older than the period is resolved again', async () => {
    await writeWaVersion(ctx.table, { version: newer(1), source: 'live', resolvedAt: Date.now() - 7 * 60 * 60_000 });
    const live = await page(swJs(newer(2)[2]));
    const keeper = await start({ liveUrl: live.url });
    expect(live.hits).toBe(1);
    expect(keeper.current()).toMatchObject({ version: newer(2), source: 'live' });
  });

  it('never goes back to an older version than the one in use', async () => {
    const live = await page(swJs(PINNED_WA_VERSION[2] - 1));
    const keeper = await start({ liveUrl: live.url });
    expect(live.hits).toBe(1);
    expect(keeper.current()).toMatchObject({ version: PINNED_WA_VERSION, source: 'pinned' });
  });

  it('after a refused login: resolved again once for every account refused together, the next time only after the gap', async () => {
    const gapMs = 1_500;
    const live = await page(swJs(PINNED_WA_VERSION[2]));
    const keeper = await start({ liveUrl: live.url, refusalGapMs: gapMs });
    expect(keeper.current()).toMatchObject({ version: PINNED_WA_VERSION, source: 'live' });
    live.body = swJs(newer(100)[2]);
    const firstAt = Date.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => keeper.newerThan(PINNED_WA_VERSION)));
    expect(answers).toEqual(Array.from({ length: 20 }, () => newer(100)));
    expect(live.hits).toBe(2);
    expect(await readWaVersion(ctx.table)).toMatchObject({ version: newer(100), source: 'live' });
    // The newer one refused too, within the gap: the callers wait for the next resolve, one for all of them.
    live.body = swJs(newer(200)[2]);
    const again = await Promise.all([keeper.newerThan(newer(100)), keeper.newerThan(newer(100))]);
    expect(again).toEqual([newer(200), newer(200)]);
    expect(Date.now() - firstAt).toBeGreaterThanOrEqual(gapMs);
    expect(live.hits).toBe(3);
  });

  it('a stop ends a wait for the next resolve: nothing newer, nothing fetched', async () => {
    const live = await page(swJs(PINNED_WA_VERSION[2]));
    const keeper = await start({ liveUrl: live.url, refusalGapMs: 60_000 });
    live.body = swJs(newer(500)[2]);
    expect(await keeper.newerThan(PINNED_WA_VERSION)).toEqual(newer(500));
    const waiting = keeper.newerThan(newer(500));
    keeper.stop();
    expect(await waiting).toBeUndefined();
    expect(live.hits).toBe(2);
  });

  it('after a refused login: a newer version another connector stored is used without fetching', async () => {
    const live = await page(swJs(PINNED_WA_VERSION[2]));
    const first = await start({ liveUrl: live.url });
    const second = await start({ liveUrl: live.url });
    expect(live.hits).toBe(1);
    live.body = swJs(newer(300)[2]);
    expect(await first.newerThan(PINNED_WA_VERSION)).toEqual(newer(300));
    expect(await second.newerThan(PINNED_WA_VERSION)).toEqual(newer(300));
    expect(live.hits).toBe(2);
  });

  it('WA_VERSION: announced as set, stored as `setting`, nothing fetched, nothing newer after a refusal', async () => {
    const live = await page(swJs(newer(400)[2]));
    const config = { WA_VERSION: '2.3000.1000000001', WA_VERSION_URL: live.url, WA_VERSION_PUBLISHED_URL: undefined };
    const keeper = await start(waVersionSourcesFrom(config, 'sandbox'));
    expect(keeper.current()).toMatchObject({ version: [2, 3000, 1_000_000_001], source: 'setting' });
    expect(await readWaVersion(ctx.table)).toMatchObject({ version: [2, 3000, 1_000_000_001], source: 'setting' });
    expect(await keeper.newerThan([2, 3000, 1_000_000_001])).toBeUndefined();
    expect(live.hits).toBe(0);
  });

  it('against a sandbox only the URLs given are read; against WhatsApp its own and Baileys by default', () => {
    const none = { WA_VERSION: undefined, WA_VERSION_URL: undefined, WA_VERSION_PUBLISHED_URL: undefined };
    expect(waVersionSourcesFrom(none, 'sandbox')).toEqual({});
    expect(waVersionSourcesFrom(none, 'whatsapp')).toEqual({
      liveUrl: 'https://web.whatsapp.com/sw.js',
      publishedUrl: expect.stringMatching(/^https:\/\/raw\.githubusercontent\.com\/WhiskeySockets\/Baileys\//),
    });
    expect(waVersionSourcesFrom({ ...none, WA_VERSION_URL: 'http://127.0.0.1:7701/sw.js' }, 'sandbox')).toEqual({
      liveUrl: 'http://127.0.0.1:7701/sw.js',
    });
  });
});
