import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, gatewayClient, onUnauthorized, problem } from './api.js';
import { href, useRoute } from './route.js';
import { storedKey, storeKey } from './session.js';
import { managesEverything, type Session, SessionContext } from './session-context.js';
import { AccountView } from './views/account.js';
import { AccountsView } from './views/accounts.js';
import { SignIn } from './views/sign-in.js';
import { WebhooksPanel } from './views/webhooks.js';

type State =
  | { phase: 'starting' }
  | { phase: 'sign-in'; notice?: string }
  | { phase: 'unreachable'; message: string }
  | { phase: 'ready'; session: Session };

export function App() {
  const [state, setState] = useState<State>({ phase: 'starting' });

  /** Asks the API what the key reaches; a key it refuses means signing in (again). */
  const start = async (key: string | undefined, notice?: string) => {
    const api = gatewayClient(key);
    try {
      const caller = await call(api.GET('/me'));
      storeKey(key);
      const signOut = key ? () => leave('Signed out.') : undefined;
      setState({
        phase: 'ready',
        session: {
          api,
          caller: { role: caller.role, ...(caller.accountId ? { accountId: caller.accountId } : {}) },
          ...(signOut ? { signOut } : {}),
        },
      });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        storeKey(undefined);
        setState({ phase: 'sign-in', ...(key ? { notice: 'That key is not valid.' } : notice ? { notice } : {}) });
      } else setState({ phase: 'unreachable', message: problem(error) });
    }
  };
  const leave = (notice: string) => {
    storeKey(undefined);
    setState({ phase: 'sign-in', notice });
  };

  useEffect(() => {
    onUnauthorized(() => leave('The key is no longer accepted. Sign in again.'));
    void start(storedKey());
  }, []);

  useEffect(() => {
    document.title = 'WhatsApp gateway';
  }, [state.phase]);

  if (state.phase === 'starting')
    return (
      <Frame>
        <p class="muted" role="status">
          Loading…
        </p>
      </Frame>
    );
  if (state.phase === 'unreachable')
    return (
      <Frame>
        <div class="panel" role="alert">
          <h1>The gateway does not answer</h1>
          <p>{state.message}</p>
          <button type="button" onClick={() => void start(storedKey())}>
            Try again
          </button>
        </div>
      </Frame>
    );
  if (state.phase === 'sign-in')
    return (
      <Frame>
        <SignIn notice={state.notice} onKey={(key) => start(key)} />
      </Frame>
    );
  return (
    <SessionContext.Provider value={state.session}>
      <Frame session={state.session}>
        <Views session={state.session} />
      </Frame>
    </SessionContext.Provider>
  );
}

function Views({ session }: { session: Session }) {
  const route = useRoute();
  // An account key opens its own account, whatever the URL says.
  const own = session.caller.role === 'account' ? session.caller.accountId : undefined;
  if (own && (route.view !== 'account' || route.accountId !== own))
    return <AccountView accountId={own} tab={route.view === 'account' ? route.tab : 'chats'} />;
  if (route.view === 'account') return <AccountView accountId={route.accountId} tab={route.tab} chatId={route.chatId} />;
  if (route.view === 'webhooks' && managesEverything(session.caller))
    return (
      <section aria-labelledby="webhooks-title">
        <h1 id="webhooks-title">Webhooks of every account</h1>
        <WebhooksPanel />
      </section>
    );
  return <AccountsView />;
}

function Frame({ session, children }: { session?: Session; children: preact.ComponentChildren }) {
  const everything = session && managesEverything(session.caller);
  return (
    <>
      <header class="top">
        <a class="brand" href={href({ view: 'accounts' })}>
          <span class="logo" aria-hidden="true" />
          WhatsApp gateway
        </a>
        {everything && (
          <nav aria-label="Main">
            <a href={href({ view: 'accounts' })}>Accounts</a>
            <a href={href({ view: 'webhooks' })}>All webhooks</a>
            <a href="../docs" target="_blank" rel="noreferrer">
              API docs
            </a>
          </nav>
        )}
        {session?.signOut && (
          <button type="button" class="quiet" onClick={session.signOut}>
            Sign out
          </button>
        )}
      </header>
      <main>{children}</main>
    </>
  );
}
