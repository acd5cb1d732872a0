import { useState } from 'preact/hooks';
import { type Account, call, problem } from '../api.js';
import { when } from '../format.js';
import { usePolling } from '../polling.js';
import { type AccountTab, go, href } from '../route.js';
import { managesEverything, useSession } from '../session-context.js';
import { ChatsPanel } from './chats.js';
import { KeysPanel } from './keys.js';
import { Linking } from './linking.js';
import { ErrorLine, StatusBadge } from './parts.js';
import { SettingsPanel } from './settings.js';
import { WebhooksPanel } from './webhooks.js';

const TAB_NAMES: Record<AccountTab, string> = { chats: 'Chats', webhooks: 'Webhooks', settings: 'Settings', keys: 'Keys' };

/** One account: its status, connection controls, linking, and its chats, webhooks, settings and keys. */
export function AccountView({ accountId, tab, chatId }: { accountId: string; tab: AccountTab; chatId?: string | undefined }) {
  const { api, caller } = useSession();
  const [account, setAccount] = useState<Account>();
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string>();

  const refresh = async () => {
    try {
      const answer = await call(api.GET('/accounts/{accountId}', { params: { path: { accountId } } }));
      setAccount(answer.account);
      setMissing(false);
      setError(undefined);
    } catch (failure) {
      if ((failure as { status?: number }).status === 404) setMissing(true);
      else setError(problem(failure));
    }
  };
  usePolling(refresh, 2_500, [api, accountId]);

  if (missing)
    return (
      <section class="panel" aria-labelledby="account-title">
        <h1 id="account-title">{accountId}</h1>
        <p role="alert">There is no account {accountId}: it was deleted, or never created.</p>
        {managesEverything(caller) && <a href={href({ view: 'accounts' })}>Back to accounts</a>}
      </section>
    );

  const status = account ? (account.currentStatus ?? account.status) : undefined;
  const tabs: AccountTab[] = managesEverything(caller) ? ['chats', 'webhooks', 'settings', 'keys'] : ['chats', 'webhooks', 'settings'];
  return (
    <section aria-labelledby="account-title" class="account">
      <div class="account-head">
        <div>
          <h1 id="account-title">{accountId}</h1>
          {account?.name && <p class="muted">{account.name}</p>}
        </div>
        <div class="account-state" aria-live="polite">
          {status ? <StatusBadge status={status} /> : <span class="muted">…</span>}
          {account?.lastDisconnect && status !== 'connected' && (
            <span class="muted small">
              last disconnect: {account.lastDisconnect.reason.replaceAll('_', ' ')}, {when(account.lastDisconnect.at)}
            </span>
          )}
          {account?.sendPause && (
            <span class="small" role="status">
              sending paused ({account.sendPause.reason.replaceAll('_', ' ')}) until {when(account.sendPause.until)}
            </span>
          )}
        </div>
        <ConnectionControls accountId={accountId} status={status} onChange={refresh} />
      </div>
      <ErrorLine error={error} />
      {account && status !== 'connected' && <Linking accountId={accountId} status={status ?? ''} hasQr={account.hasQR === true} />}
      <nav class="tabs" aria-label="Account">
        {tabs.map((name) => (
          <a key={name} href={href({ view: 'account', accountId, tab: name })} aria-current={tab === name ? 'page' : undefined}>
            {TAB_NAMES[name]}
          </a>
        ))}
      </nav>
      {tab === 'chats' && <ChatsPanel accountId={accountId} chatId={chatId} />}
      {tab === 'webhooks' && <WebhooksPanel accountId={accountId} />}
      {tab === 'settings' && <SettingsPanel accountId={accountId} />}
      {tab === 'keys' && managesEverything(caller) && <KeysPanel accountId={accountId} />}
    </section>
  );
}

function ConnectionControls({
  accountId,
  status,
  onChange,
}: {
  accountId: string;
  status: string | undefined;
  onChange: () => Promise<void>;
}) {
  const { api, caller } = useSession();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const path = { params: { path: { accountId } } };
  const act = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      await onChange();
    } catch (failure) {
      setError(problem(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="controls">
      <button
        type="button"
        disabled={busy || status === 'connected'}
        onClick={() => act(() => call(api.POST('/accounts/{accountId}/connect', path)))}
      >
        Connect
      </button>
      <button
        type="button"
        class="secondary"
        disabled={busy}
        onClick={() => act(() => call(api.POST('/accounts/{accountId}/disconnect', path)))}
      >
        Disconnect
      </button>
      {managesEverything(caller) &&
        (confirming ? (
          <span class="confirm">
            <span>Delete {accountId} with its messages, media and keys?</span>
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() =>
                act(async () => {
                  await call(api.DELETE('/accounts/{accountId}', path));
                  go({ view: 'accounts' });
                })
              }
            >
              Confirm delete
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </span>
        ) : (
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Delete account
          </button>
        ))}
      <ErrorLine error={error} />
    </div>
  );
}
