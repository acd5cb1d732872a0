import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../core/logger.js';
import { readWaVersion, writeWaVersion, type StoredWaVersion } from '../../core/store/wa-version.js';
import type { Table } from '../../core/store/table.js';
import { compareWaVersions, waVersionText, type WaVersion } from '../../core/wa-version.js';
import { PINNED_WA_VERSION } from './pinned.js';
import { fetchVersion, liveVersionIn, publishedVersionIn } from './sources.js';

export interface WaVersionKeeperDeps {
  table: Table;
  logger: Logger;
  /** `WA_VERSION`: announced as it is, nothing fetched. */
  setting?: WaVersion;
  /** Where WhatsApp Web's current revision is read (`sw.js`); none: skipped. */
  liveUrl?: string;
  /** Where the version Baileys publishes is read; none: skipped. */
  publishedUrl?: string;
  /** How long a resolved version serves every connector before one resolves it again. */
  refreshEveryMs?: number;
  /** After a refused login: the version is resolved again at most this often. */
  refusalGapMs?: number;
  /** Bound on each source's answer. */
  fetchTimeoutMs?: number;
}

const REFRESH_EVERY_MS = 6 * 60 * 60_000;
/** A refresh in which no source answered is tried again this much sooner than a period. */
const RETRY_AFTER_NO_ANSWER_MS = 10 * 60_000;
const REFUSAL_GAP_MS = 10_000;
const FETCH_TIMEOUT_MS = 5_000;

/**
 * The WhatsApp Web version this connector's sockets announce (docs/connector.md, "When WhatsApp
 * moves"). Resolved at start and every 6 h: the version another connector stored within the period
 * is used as it is (one fetch per deployment and period, not per account or connector); otherwise
 * WhatsApp Web's `sw.js`, then the version Baileys publishes, then the pinned one, and the result
 * is stored for the others and for `GET /ping`. It never goes back to an older version: an older
 * answer (a fallback, a stale record) keeps the newer one in use. After a refused login
 * (`newerThan`) it is resolved again at once, at most once per 10 s, so that twenty accounts
 * refused together cost one fetch.
 */
export class WaVersionKeeper {
  private inUse: StoredWaVersion;
  private timer: NodeJS.Timeout | undefined;
  private readonly stopping = new AbortController();
  private refusalRefresh: Promise<void> | undefined;
  private lastRefusalRefreshAt = Number.NEGATIVE_INFINITY;
  private readonly refreshEveryMs: number;
  private readonly log: Logger;

  private constructor(private readonly deps: WaVersionKeeperDeps) {
    this.refreshEveryMs = deps.refreshEveryMs ?? REFRESH_EVERY_MS;
    this.log = deps.logger.child({ component: 'wa-version' });
    this.inUse = deps.setting
      ? { version: deps.setting, source: 'setting', resolvedAt: Date.now() }
      : { version: PINNED_WA_VERSION, source: 'pinned', resolvedAt: Date.now() };
  }

  /** Resolves the version (bounded by the sources' time limits) and keeps it current until `stop`. */
  static async start(deps: WaVersionKeeperDeps): Promise<WaVersionKeeper> {
    const keeper = new WaVersionKeeper(deps);
    if (deps.setting) await keeper.store();
    else await keeper.refresh();
    keeper.log.info({ version: waVersionText(keeper.inUse.version), source: keeper.inUse.source }, 'WhatsApp Web version');
    return keeper;
  }

  /** The version the next socket announces, where it came from and when it was resolved. */
  current(): StoredWaVersion {
    return this.inUse;
  }

  /**
   * After WhatsApp refused a login that announced `refused`: a newer version to log in with, or
   * undefined when none is known. Resolves the version again, at most once per 10 s (callers
   * meanwhile share that resolve, or wait for the next one), first from the stored one (another
   * connector may have found it), then from the sources.
   */
  async newerThan(refused: WaVersion): Promise<WaVersion | undefined> {
    const newer = () => (compareWaVersions(this.inUse.version, refused) > 0 ? this.inUse.version : undefined);
    if (newer() || this.deps.setting) return newer();
    this.refusalRefresh ??= this.refreshAfterRefusal(refused).finally(() => {
      this.refusalRefresh = undefined;
    });
    await this.refusalRefresh;
    return newer();
  }

  /**
   * Within the gap of the last one, waits for its end rather than answering "nothing newer": a
   * refused account then logs in again as soon as the next resolve allows, not after its backoff.
   */
  private async refreshAfterRefusal(refused: WaVersion): Promise<void> {
    const wait = this.lastRefusalRefreshAt + (this.deps.refusalGapMs ?? REFUSAL_GAP_MS) - Date.now();
    if (wait > 0) {
      const ended = await delay(wait, undefined, { signal: this.stopping.signal }).then(
        () => false,
        () => true,
      );
      if (ended) return;
    }
    this.lastRefusalRefreshAt = Date.now();
    await this.refresh({ olderThan: refused });
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopping.abort();
  }

  /**
   * One refresh: the stored version when it is recent (or, after a refusal, newer than the
   * refused one), else the sources'. A stored `pinned` means no source answered its connector:
   * not reused. Then the next refresh is scheduled.
   */
  private async refresh(after?: { olderThan: WaVersion }): Promise<void> {
    try {
      const stored = await readWaVersion(this.deps.table).catch((error: unknown) => {
        this.log.warn({ err: error }, 'reading the stored WhatsApp Web version failed');
        return undefined;
      });
      const usable =
        stored &&
        stored.source !== 'pinned' &&
        (after ? compareWaVersions(stored.version, after.olderThan) > 0 : Date.now() - stored.resolvedAt < this.refreshEveryMs);
      if (usable) {
        this.adopt(stored);
        return;
      }
      if (this.stopping.signal.aborted) return;
      const resolved = await this.resolve();
      // Stored as resolved now even when an older answer kept the version in use: the other
      // connectors then wait a period too instead of asking again.
      this.adopt(resolved);
      this.inUse = { ...this.inUse, resolvedAt: resolved.resolvedAt };
      await this.store();
    } finally {
      this.schedule();
    }
  }

  /** The first source that answers, in order; the pinned version when none does. */
  private async resolve(): Promise<StoredWaVersion> {
    const sources = [
      { source: 'live', url: this.deps.liveUrl, find: liveVersionIn },
      { source: 'published', url: this.deps.publishedUrl, find: publishedVersionIn },
    ] as const;
    for (const { source, url, find } of sources) {
      if (!url) continue;
      const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.deps.fetchTimeoutMs ?? FETCH_TIMEOUT_MS)]);
      try {
        return { version: await fetchVersion(url, find, signal), source, resolvedAt: Date.now() };
      } catch (error) {
        this.log.warn({ source, url, reason: error instanceof Error ? error.message : String(error) }, 'WhatsApp Web version not read');
      }
    }
    return { version: PINNED_WA_VERSION, source: 'pinned', resolvedAt: Date.now() };
  }

  /** Takes `candidate` unless it is older than the version in use; true when the version changed. */
  private adopt(candidate: StoredWaVersion): boolean {
    const order = compareWaVersions(candidate.version, this.inUse.version);
    if (order < 0) return false;
    const previous = this.inUse;
    this.inUse = candidate;
    if (order > 0) {
      this.log.info(
        { version: waVersionText(candidate.version), previous: waVersionText(previous.version), source: candidate.source },
        'WhatsApp Web version changed',
      );
    }
    return order > 0;
  }

  private async store(): Promise<void> {
    await writeWaVersion(this.deps.table, this.inUse).catch((error: unknown) => {
      this.log.warn({ err: error }, 'storing the WhatsApp Web version failed');
    });
  }

  private schedule(): void {
    if (this.deps.setting || this.stopping.signal.aborted) return;
    clearTimeout(this.timer);
    const noAnswer = this.inUse.source === 'pinned' && Boolean(this.deps.liveUrl || this.deps.publishedUrl);
    this.timer = setTimeout(
      () => void this.refresh(),
      noAnswer ? Math.min(RETRY_AFTER_NO_ANSWER_MS, this.refreshEveryMs) : this.refreshEveryMs,
    );
    this.timer.unref();
  }
}
