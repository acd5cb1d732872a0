import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../client/index.js';
import { call, problem } from '../api.js';
import { useSession } from '../session-context.js';
import { ErrorLine } from './parts.js';

type Settings = components['schemas']['AccountSettings'];
type Policy = Settings['sendPolicy'];
type Patch = components['schemas']['AccountSettingsPatch'];

/** The number fields of the pace, with their labels and ranges (docs/sending.md). */
const PACE_FIELDS: { key: 'perMinute' | 'perHour' | 'perDay' | 'newChatsPerDay' | 'queueLimit'; label: string; min: number }[] = [
  { key: 'perMinute', label: 'Sends per minute', min: 1 },
  { key: 'perHour', label: 'Sends per hour', min: 1 },
  { key: 'perDay', label: 'Sends per day', min: 1 },
  { key: 'newChatsPerDay', label: 'New chats per day', min: 0 },
  { key: 'queueLimit', label: 'Sends waiting at most', min: 1 },
];

/**
 * An account's settings (docs/sending.md): calls, groups, history, proxy and the pace of its
 * sends. Read once when the tab opens (settings change when someone changes them, so no
 * polling), saved with one PATCH; the API's 400 names the field that is wrong. The proxy is
 * shown as the API answers it, its password as `***`: sent back unchanged, it keeps the stored one.
 */
export function SettingsPanel({ accountId }: { accountId: string }) {
  const { api } = useSession();
  const [saved, setSaved] = useState<Settings>();
  const [draft, setDraft] = useState<Settings>();
  const [proxyUrl, setProxyUrl] = useState('');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<string>();
  const [busy, setBusy] = useState(false);
  const path = { params: { path: { accountId } } };

  const show = (settings: Settings) => {
    setSaved(settings);
    setDraft(settings);
    setProxyUrl(settings.proxy?.url ?? '');
    setMessage(settings.callRejectMessage ?? '');
  };

  useEffect(() => {
    call(api.GET('/accounts/{accountId}/settings', path)).then(
      (answer) => show(answer.settings),
      (failure: unknown) => setError(problem(failure)),
    );
  }, [api, accountId]);

  if (!draft || !saved)
    return error ? (
      <ErrorLine error={error} />
    ) : (
      <p class="muted" role="status">
        Loading settings…
      </p>
    );

  const set = (change: Partial<Settings>) => setDraft({ ...draft, ...change });
  const setPolicy = (change: Partial<Policy>) => setDraft({ ...draft, sendPolicy: { ...draft.sendPolicy, ...change } });
  const number = (value: string) => (value.trim() === '' ? Number.NaN : Number(value));

  const patchOf = (): Patch => {
    const proxy = proxyUrl.trim();
    return {
      sendPolicy: draft.sendPolicy,
      rejectCalls: draft.rejectCalls,
      callRejectMessage: message.trim() ? message : null,
      ignoreGroups: draft.ignoreGroups,
      history: draft.history,
      // Unchanged, the masked URL is left out: the stored one (with its password) stays.
      ...(proxy === (saved.proxy?.url ?? '') ? {} : { proxy: proxy ? { url: proxy } : null }),
    };
  };

  return (
    <form
      class="panel settings"
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        setError(undefined);
        setStatus(undefined);
        try {
          show((await call(api.PATCH('/accounts/{accountId}/settings', { ...path, body: patchOf() }))).settings);
          setStatus('Settings saved. A connected account applies them at once.');
        } catch (failure) {
          setError(problem(failure));
        } finally {
          setBusy(false);
        }
      }}
    >
      <fieldset>
        <legend>Calls</legend>
        <label class="check">
          <input type="checkbox" checked={draft.rejectCalls} onChange={(event) => set({ rejectCalls: event.currentTarget.checked })} />
          Decline incoming calls
        </label>
        <label class="wide">
          Message to a declined caller
          <textarea
            rows={2}
            maxLength={1000}
            placeholder="optional: e.g. This number does not take calls; please write instead."
            value={message}
            onInput={(event) => setMessage(event.currentTarget.value)}
          />
        </label>
      </fieldset>
      <fieldset>
        <legend>Groups and history</legend>
        <label class="check">
          <input type="checkbox" checked={draft.ignoreGroups} onChange={(event) => set({ ignoreGroups: event.currentTarget.checked })} />
          Ignore group messages (neither stored nor sent to webhooks)
        </label>
        <label>
          History to import after linking
          <select value={draft.history} onChange={(event) => set({ history: event.currentTarget.value as Settings['history'] })}>
            <option value="none">none</option>
            <option value="recent">recent</option>
            <option value="full">full</option>
          </select>
        </label>
      </fieldset>
      <fieldset>
        <legend>Proxy</legend>
        <label class="wide">
          Proxy URL
          <input
            type="text"
            inputMode="url"
            autocomplete="off"
            placeholder="none, or socks5://user:password@host:1080"
            value={proxyUrl}
            onInput={(event) => setProxyUrl(event.currentTarget.value)}
          />
        </label>
        <p class="muted small wide">http://, https:// or socks5://; the password is never shown again (***). Used from the next connect.</p>
      </fieldset>
      <fieldset>
        <legend>Pace of sends</legend>
        <label class="check wide">
          <input
            type="checkbox"
            checked={draft.sendPolicy.enabled}
            onChange={(event) => setPolicy({ enabled: event.currentTarget.checked })}
          />
          Pace this account's sends
        </label>
        {PACE_FIELDS.map(({ key, label, min }) => (
          <label key={key}>
            {label}
            <input
              type="number"
              min={min}
              max={100000}
              step={1}
              required
              value={draft.sendPolicy[key]}
              onInput={(event) => setPolicy({ [key]: number(event.currentTarget.value) })}
            />
          </label>
        ))}
        <label>
          Shortest gap (ms)
          <input
            type="number"
            min={0}
            max={600000}
            step={1}
            required
            value={draft.sendPolicy.gapMs.min}
            onInput={(event) => setPolicy({ gapMs: { ...draft.sendPolicy.gapMs, min: number(event.currentTarget.value) } })}
          />
        </label>
        <label>
          Longest gap (ms)
          <input
            type="number"
            min={0}
            max={600000}
            step={1}
            required
            value={draft.sendPolicy.gapMs.max}
            onInput={(event) => setPolicy({ gapMs: { ...draft.sendPolicy.gapMs, max: number(event.currentTarget.value) } })}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={draft.sendPolicy.typing}
            onChange={(event) => setPolicy({ typing: event.currentTarget.checked })}
          />
          Show typing before a text
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={draft.sendPolicy.warmup}
            onChange={(event) => setPolicy({ warmup: event.currentTarget.checked })}
          />
          Warm up a newly linked number
        </label>
        <p class="muted small wide">
          Every message send waits its turn under these limits; a send that asks not to wait is queued and can be cancelled.
        </p>
      </fieldset>
      <div class="controls">
        <button type="submit" disabled={busy}>
          Save settings
        </button>
      </div>
      <ErrorLine error={error} />
      {status && (
        <p class="muted" role="status">
          {status}
        </p>
      )}
    </form>
  );
}
