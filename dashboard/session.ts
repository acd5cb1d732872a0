/**
 * The key a person signed in with: kept for this tab only (sessionStorage), never in a URL,
 * gone when the tab closes.
 */
const STORAGE_KEY = 'wa-gateway.key';

export function storedKey(): string | undefined {
  try {
    return window.sessionStorage.getItem(STORAGE_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function storeKey(key: string | undefined): void {
  try {
    if (key) window.sessionStorage.setItem(STORAGE_KEY, key);
    else window.sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage refused (a private window's quota): the key lasts as long as the page then.
  }
}
