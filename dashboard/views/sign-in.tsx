import { useState } from 'preact/hooks';

/** Keys are on (`API_KEY`): the console asks for one before anything else. */
export function SignIn({ notice, onKey }: { notice?: string | undefined; onKey: (key: string) => Promise<void> }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="panel sign-in"
      onSubmit={async (event) => {
        event.preventDefault();
        if (!key.trim()) return;
        setBusy(true);
        await onKey(key.trim());
        setBusy(false);
      }}
    >
      <h1>Sign in</h1>
      <p class="muted">This gateway asks for a key: an admin key (API_KEY) or an account's access key.</p>
      {notice && (
        <p class="notice" role="alert">
          {notice}
        </p>
      )}
      <label>
        Access key
        <input
          type="password"
          name="key"
          autocomplete="current-password"
          required
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
      </label>
      <p class="muted small">Kept for this tab only, and sent only to this gateway.</p>
      <button type="submit" disabled={busy}>
        Sign in
      </button>
    </form>
  );
}
