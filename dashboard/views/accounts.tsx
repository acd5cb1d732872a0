import { useState } from 'preact/hooks';
import { type Account, call, problem } from '../api.js';
import { when } from '../format.js';
import { usePolling } from '../polling.js';
import { go, href } from '../route.js';
import { useSession } from '../session-context.js';
import { Empty, ErrorLine, StatusBadge } from './parts.js';

/** Every account with its live status; create one. */
export function AccountsView() {
  const { api } = useSession();
  const [accounts, setAccounts] = useState<Account[] | undefined>();
  const [error, setError] = useState<string>();

  usePolling(
    async () => {
      try {
        const answer = await call(api.GET('/accounts'));
        setAccounts([...answer.accounts].sort((a, b) => a._id.localeCompare(b._id)));
        setError(undefined);
      } catch (failure) {
        setError(problem(failure));
      }
    },
    2_500,
    [api],
  );

  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      <CreateAccount />
      <ErrorLine error={error} />
      {accounts === undefined ? (
        <p class="muted" role="status">
          Loading accounts…
        </p>
      ) : accounts.length === 0 ? (
        <Empty>No accounts yet. Create one above, then link a phone to it by QR code or pairing code.</Empty>
      ) : (
        <ul class="cards" aria-label="Accounts">
          {accounts.map((account) => (
            <li key={account._id} class="card account-card">
              <a class="card-title" href={href({ view: 'account', accountId: account._id, tab: 'chats' })}>
                {account._id}
              </a>
              {account.name && <span class="muted">{account.name}</span>}
              <StatusBadge status={account.currentStatus ?? account.status} />
              {account.hasQR && <span class="hint">waiting for a scan</span>}
              {account.createdAt && <span class="muted small">created {when(account.createdAt)}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function CreateAccount() {
  const { api } = useSession();
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="inline-form"
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        try {
          await call(api.POST('/accounts', { body: { id: id.trim(), ...(name.trim() ? { name: name.trim() } : {}) } }));
          go({ view: 'account', accountId: id.trim(), tab: 'chats' });
        } catch (failure) {
          setError(problem(failure));
        } finally {
          setBusy(false);
        }
      }}
    >
      <label>
        Account id
        <input
          name="id"
          required
          pattern="[A-Za-z0-9]{1,64}"
          title="Letters and digits, up to 64"
          autocomplete="off"
          value={id}
          onInput={(event) => setId(event.currentTarget.value)}
        />
      </label>
      <label>
        Name
        <input name="name" autocomplete="off" value={name} onInput={(event) => setName(event.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Create account
      </button>
      <ErrorLine error={error} />
    </form>
  );
}
