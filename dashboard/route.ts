import { useEffect, useState } from 'preact/hooks';

/**
 * Where the person is, kept in the URL's fragment: reloads and the back button work, and the
 * server serves one page whatever the view.
 */
export type AccountTab = 'chats' | 'webhooks' | 'settings' | 'keys';
export type Route = { view: 'accounts' } | { view: 'webhooks' } | { view: 'account'; accountId: string; tab: AccountTab; chatId?: string };

const TABS: readonly AccountTab[] = ['chats', 'webhooks', 'settings', 'keys'];

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'webhooks') return { view: 'webhooks' };
  if (parts[0] === 'accounts' && parts[1]) {
    const tab = TABS.find((candidate) => candidate === parts[2]) ?? 'chats';
    return { view: 'account', accountId: parts[1], tab, ...(tab === 'chats' && parts[3] ? { chatId: parts[3] } : {}) };
  }
  return { view: 'accounts' };
}

export function href(route: Route): string {
  if (route.view === 'accounts') return '#/';
  if (route.view === 'webhooks') return '#/webhooks';
  const parts = ['accounts', route.accountId, route.tab, ...(route.chatId ? [route.chatId] : [])];
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function go(route: Route): void {
  window.location.hash = href(route);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}
