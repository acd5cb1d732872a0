import chromium from '@sparticuz/chromium';
import { type Browser, type BrowserContext, type Page, chromium as playwright } from 'playwright-core';

/**
 * A real browser for the console's tests, from npm alone: the Chromium that @sparticuz/chromium
 * ships in its package (unpacked to /tmp on first use, ~3 s), driven by playwright-core. No
 * system browser, no download. Its arguments run Chromium as one process (made for Lambda),
 * where closing a browser context ends the whole browser: `closableContexts` runs it as a
 * desktop browser does, a process per page, for callers that open and close contexts.
 */
export async function launchBrowser(options: { closableContexts?: boolean } = {}): Promise<Browser> {
  const args = options.closableContexts ? chromium.args.filter((arg) => arg !== '--single-process') : chromium.args;
  return playwright.launch({ executablePath: await chromium.executablePath(), args, headless: true });
}

/** What a page did that a test asserts it did not: script errors, and requests to other hosts. */
export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Uncaught exceptions and console errors other than the browser's own note of an HTTP error answer. */
  errors: string[];
  /** Every request to anything but `origin` (blob: and data: URLs are the page's own). */
  foreignRequests: string[];
}

/** A new context (its own sessionStorage: a new tab) and page, watched from the first request. */
export async function openPage(browser: Browser, origin: string, viewport = { width: 1280, height: 800 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const watched: WatchedPage = { page, context, errors: [], foreignRequests: [] };
  page.on('pageerror', (error) => watched.errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    // A 401 or 404 the console handles is still logged by Chromium as a failed load.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      watched.errors.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    const url = request.url();
    if (url.startsWith('blob:') || url.startsWith('data:')) return;
    if (new URL(url).origin !== origin) watched.foreignRequests.push(url);
  });
  return watched;
}

// The checks below run in the page: written as source text, since this project's TypeScript
// is typed for Node, not for the DOM.

/**
 * Interactive elements without an accessible name: each control needs a label (its own text, a
 * `<label>`, aria-label or aria-labelledby; alt text for images). Hidden ones are skipped.
 */
const UNNAMED_CONTROLS = `() => {
  const selector = 'a[href], button, input:not([type="hidden"]), select, textarea, img, [role="button"], [tabindex]:not([tabindex="-1"])';
  const text = (value) => (value ?? '').trim() !== '';
  const unnamed = [];
  for (const element of document.querySelectorAll(selector)) {
    const style = getComputedStyle(element);
    if (style.display === 'none' || style.visibility === 'hidden' || element.closest('[hidden]')) continue;
    const labelledBy = element.getAttribute('aria-labelledby');
    const named =
      text(element.getAttribute('aria-label')) ||
      (labelledBy !== null && labelledBy.split(' ').some((id) => text(document.getElementById(id)?.textContent))) ||
      (element.labels?.length ?? 0) > 0 ||
      (element instanceof HTMLImageElement ? text(element.alt) : text(element.textContent)) ||
      text(element.getAttribute('title'));
    if (!named) unnamed.push(element.outerHTML.slice(0, 120));
  }
  return unnamed;
}`;

export async function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`(${UNNAMED_CONTROLS})()`);
}

/**
 * The elements that stick out past the right edge of the viewport (none: no sideways scrolling
 * on that screen), each as the start of its tag, for the failure message.
 */
const WIDER_THAN_SCREEN = `(() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const element of document.body.querySelectorAll('*')) {
    const box = element.getBoundingClientRect();
    if (box.width > 0 && box.right > width + 0.5) wide.push(element.outerHTML.slice(0, 100));
  }
  return document.documentElement.scrollWidth > width ? wide : [];
})()`;

export async function widerThanScreen(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(WIDER_THAN_SCREEN);
}
