import { useState } from 'preact/hooks';
import { type AccessKey, call, problem } from '../api.js';
import { when } from '../format.js';
import { usePolling } from '../polling.js';
import { useSession } from '../session-context.js';
import { Empty, ErrorLine } from './parts.js';

/** An account's access keys (admin): create one (its secret shown once), list, revoke. */
export function KeysPanel({ accountId }: { accountId: string }) {
  const { api } = useSession();
  const [keys, setKeys] = useState<AccessKey[]>();
  const [name, setName] = useState('');
  const [secret, setSecret] = useState<{ name: string; value: string }>();
  const [error, setError] = useState<string>();
  const path = { params: { path: { accountId } } };

  const refresh = async () => {
    try {
      setKeys((await call(api.GET('/accounts/{accountId}/keys', path))).keys);
      setError(undefined);
    } catch (failure) {
      setError(problem(failure));
    }
  };
  usePolling(refresh, 30_000, [api, accountId]);

  return (
    <div class="keys">
      <form
        class="panel inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          setError(undefined);
          try {
            const answer = await call(api.POST('/accounts/{accountId}/keys', { ...path, body: name.trim() ? { name: name.trim() } : {} }));
            setSecret({ name: answer.key.name ?? answer.key.keyId, value: answer.secret });
            setName('');
            await refresh();
          } catch (failure) {
            setError(problem(failure));
          }
        }}
      >
        <label>
          Key name
          <input maxLength={100} placeholder="crm integration" value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <button type="submit">Create key</button>
      </form>
      <ErrorLine error={error} />
      {secret && (
        <div class="panel secret" role="status">
          <p>
            The key <strong>{secret.name}</strong> reaches this account only. Copy it now: it is not shown again.
          </p>
          <code class="secret-value">{secret.value}</code>
          <div class="controls">
            <button type="button" class="secondary" onClick={() => void navigator.clipboard?.writeText(secret.value)}>
              Copy key
            </button>
            <button type="button" class="quiet" onClick={() => setSecret(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      {keys === undefined ? (
        <p class="muted" role="status">
          Loading keys…
        </p>
      ) : keys.length === 0 ? (
        <Empty>No keys for this account. A key lets a client reach this account and nothing else.</Empty>
      ) : (
        <ul class="cards" aria-label="Access keys">
          {keys.map((key) => (
            <li key={key.keyId} class="card">
              <span class="card-title">{key.name ?? key.keyId}</span>
              <span class="muted small">
                created {when(key.createdAt)} · {key.lastUsedAt ? `last used ${when(key.lastUsedAt)}` : 'never used'}
              </span>
              <button
                type="button"
                class="danger"
                aria-label={`Revoke key ${key.name ?? key.keyId}`}
                onClick={async () => {
                  try {
                    await call(api.DELETE('/accounts/{accountId}/keys/{keyId}', { params: { path: { accountId, keyId: key.keyId } } }));
                    await refresh();
                  } catch (failure) {
                    setError(problem(failure));
                  }
                }}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
