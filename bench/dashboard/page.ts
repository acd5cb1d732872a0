import type { Browser, BrowserContext, Page, Request } from 'playwright-core';

/**
 * The browser side of bench:dashboard. The scripts that run in the page are source text (this
 * project's TypeScript is typed for Node, not for the DOM), as in test/support/browser.ts.
 */

/** Where the console keeps the key of a signed-in tab (dashboard/session.ts). */
const KEY_STORAGE = 'wa-gateway.key';

/**
 * A new context (empty cache, its own sessionStorage) whose tab is already signed in: the key
 * is in sessionStorage before the page's first script, as after a reload of a signed-in tab.
 */
export async function signedInPage(
  browser: Browser,
  key: string,
  viewport = { width: 1280, height: 800 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript(`try { sessionStorage.setItem(${JSON.stringify(KEY_STORAGE)}, ${JSON.stringify(key)}); } catch {}`);
  return { context, page: await context.newPage() };
}

/**
 * Installed before the page loads: once `count` accounts are list items, the time since
 * navigation start (performance.now) of the frame that shows them, as `window.__accountsShown`.
 */
export function accountsShownScript(count: number): string {
  return `(() => {
  const observer = new MutationObserver(() => {
    if (document.querySelectorAll('ul[aria-label="Accounts"] > li').length < ${count}) return;
    observer.disconnect();
    requestAnimationFrame(() => { window.__accountsShown = performance.now(); });
  });
  observer.observe(document, { childList: true, subtree: true });
})()`;
}

/**
 * Run in the page before a click on a chat: records the click's time, and the frame that shows
 * `count` messages of the opened chat, as `window.__chatTiming = { clickedAt, shownAt }`.
 */
export function watchChatOpening(count: number): string {
  return `(() => {
  window.__chatTiming = undefined;
  let clickedAt;
  document.addEventListener('click', () => { clickedAt ??= performance.now(); }, { capture: true, once: true });
  const observer = new MutationObserver(() => {
    if (clickedAt === undefined || document.querySelectorAll('ol.messages > li.message').length < ${count}) return;
    observer.disconnect();
    requestAnimationFrame(() => { window.__chatTiming = { clickedAt, shownAt: performance.now() }; });
  });
  observer.observe(document.body, { childList: true, subtree: true });
})()`;
}

/**
 * Makes the tab hidden as far as the page can tell (document.visibilityState 'hidden' and a
 * visibilitychange event). Headless Chromium keeps every page 'visible', behind another tab or
 * minimized alike, so the page is told directly.
 */
export const HIDE_TAB = `(() => {
  Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
  Object.defineProperty(document, 'hidden', { value: true, configurable: true });
  document.dispatchEvent(new Event('visibilitychange'));
})()`;

/**
 * Waits for the page's global `name` (set by the scripts above) and answers it. A function, not
 * source text: the console's Content-Security-Policy forbids the page to evaluate strings.
 */
export async function pageValue<T>(page: Page, name: string): Promise<T> {
  const handle = await page.waitForFunction((key) => (globalThis as unknown as Record<string, unknown>)[key], name);
  return (await handle.jsonValue()) as T;
}

/** A route as the API documents it: the path with its ids as parameters, no query. */
function routeOf(method: string, url: string): string {
  const path = new URL(url).pathname
    .replace(/^\/accounts\/[^/]+/, '/accounts/:accountId')
    .replace(/\/chats\/[^/]+/, '/chats/:chatId')
    .replace(/\/webhooks\/[^/]+/, '/webhooks/:webhookId')
    .replace(/\/messages\/[^/]+\/media$/, '/messages/:messageId/media');
  return `${method} ${path}`;
}

/** True for a request to the API, not for the console's own files. */
export function isApiRequest(request: Request, origin: string): boolean {
  const url = new URL(request.url());
  return url.origin === origin && !url.pathname.startsWith('/dashboard');
}

export interface CountedRequest {
  route: string;
  /** Body bytes of the answer as received. */
  bytes: number;
}

/** Every API request the page sends from now on, with its answer's size once it has one. */
export function countApiRequests(page: Page, origin: string): { requests: CountedRequest[]; stop: () => void } {
  const requests: CountedRequest[] = [];
  let counting = true;
  const onRequest = (request: Request) => {
    if (!counting || !isApiRequest(request, origin)) return;
    const counted: CountedRequest = { route: routeOf(request.method(), request.url()), bytes: 0 };
    requests.push(counted);
    void request
      .response()
      .then((response) => response?.request().sizes())
      .then((sizes) => {
        if (sizes) counted.bytes = sizes.responseBodySize;
      })
      .catch(() => undefined);
  };
  page.on('request', onRequest);
  return {
    requests,
    stop: () => {
      counting = false;
      page.off('request', onRequest);
    },
  };
}
