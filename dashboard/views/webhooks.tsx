import { useState } from 'preact/hooks';
import type { components } from '../../client/index.js';
import { call, type Delivery, problem, type Webhook } from '../api.js';
import { when } from '../format.js';
import { usePolling } from '../polling.js';
import { managesEverything, useSession } from '../session-context.js';
import { Empty, ErrorLine } from './parts.js';

type EventName = NonNullable<components['schemas']['WebhookRegistrationRequest']['events']>[number];

/** The events a webhook can ask for; `*` is every one, later ones included. */
const EVENT_NAMES: EventName[] = [
  'message',
  'message.status',
  'message.reaction',
  'message.revoked',
  'message.edited',
  'message.poll_vote',
  'session.status',
  'qr',
  'call',
  'account.limit',
  'history.sync',
];

/**
 * Webhooks: one account's (its tab) or every one (the admin's page): add, delete, each one's
 * deliveries log and a replay of a time range.
 */
export function WebhooksPanel({ accountId }: { accountId?: string }) {
  const { api } = useSession();
  const [webhooks, setWebhooks] = useState<Webhook[]>();
  const [error, setError] = useState<string>();
  const [open, setOpen] = useState<string>();

  const refresh = async () => {
    try {
      const answer = accountId
        ? await call(api.GET('/accounts/{accountId}/webhooks', { params: { path: { accountId } } }))
        : await call(api.GET('/webhooks'));
      setWebhooks(answer.webhooks);
      setError(undefined);
    } catch (failure) {
      setError(problem(failure));
    }
  };
  usePolling(refresh, 15_000, [api, accountId]);

  const remove = async (webhook: Webhook) => {
    try {
      if (accountId)
        await call(
          api.DELETE('/accounts/{accountId}/webhooks/{webhookId}', { params: { path: { accountId, webhookId: webhook.webhookId } } }),
        );
      else await call(api.DELETE('/webhooks/{webhookId}', { params: { path: { webhookId: webhook.webhookId } } }));
      await refresh();
    } catch (failure) {
      setError(problem(failure));
    }
  };

  return (
    <div class="webhooks">
      <AddWebhook accountId={accountId} onAdded={refresh} />
      <ErrorLine error={error} />
      {webhooks === undefined ? (
        <p class="muted" role="status">
          Loading webhooks…
        </p>
      ) : webhooks.length === 0 ? (
        <Empty>No webhooks yet. Add one to receive {accountId ? "this account's" : 'every account’s'} events as HTTP POSTs.</Empty>
      ) : (
        <ul class="cards" aria-label="Webhooks">
          {webhooks.map((webhook) => (
            <li key={webhook.webhookId} class="card webhook">
              <div class="webhook-head">
                <code class="url">{webhook.url}</code>
                <span class="muted small">
                  {webhook.events.join(', ')} · {webhook.accountId ? `account ${webhook.accountId}` : 'every account'} · added{' '}
                  {when(webhook.createdAt)}
                </span>
              </div>
              <div class="controls">
                <button
                  type="button"
                  class="secondary"
                  aria-expanded={open === webhook.webhookId}
                  onClick={() => setOpen(open === webhook.webhookId ? undefined : webhook.webhookId)}
                >
                  Deliveries
                </button>
                <button type="button" class="danger" aria-label={`Delete webhook ${webhook.url}`} onClick={() => remove(webhook)}>
                  Delete
                </button>
              </div>
              {open === webhook.webhookId && <Deliveries webhook={webhook} accountId={accountId} />}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function AddWebhook({ accountId, onAdded }: { accountId: string | undefined; onAdded: () => Promise<void> }) {
  const { api } = useSession();
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [events, setEvents] = useState<EventName[]>(['message']);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const toggle = (name: EventName, on: boolean) =>
    setEvents((current) => (on ? [...current.filter((event) => event !== name), name] : current.filter((event) => event !== name)));
  return (
    <form
      class="panel add-webhook"
      onSubmit={async (event) => {
        event.preventDefault();
        if (events.length === 0) {
          setError('Choose at least one event.');
          return;
        }
        setBusy(true);
        setError(undefined);
        try {
          const body = { url: url.trim(), events: events.includes('*') ? (['*'] as EventName[]) : events, ...(secret ? { secret } : {}) };
          if (accountId) await call(api.POST('/accounts/{accountId}/webhooks', { params: { path: { accountId } }, body }));
          else await call(api.POST('/webhooks', { body }));
          setUrl('');
          setSecret('');
          await onAdded();
        } catch (failure) {
          setError(problem(failure));
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2>Add a webhook</h2>
      <label>
        Webhook URL
        <input
          type="url"
          required
          placeholder="https://example.com/whatsapp"
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
      </label>
      <fieldset>
        <legend>Events</legend>
        <label class="check">
          <input type="checkbox" checked={events.includes('*')} onChange={(event) => toggle('*', event.currentTarget.checked)} />
          every event (*)
        </label>
        {EVENT_NAMES.map((name) => (
          <label class="check" key={name}>
            <input
              type="checkbox"
              disabled={events.includes('*')}
              checked={events.includes(name) || events.includes('*')}
              onChange={(event) => toggle(name, event.currentTarget.checked)}
            />
            {name}
          </label>
        ))}
      </fieldset>
      <label>
        Secret
        <input
          type="password"
          autocomplete="new-password"
          minLength={16}
          maxLength={256}
          placeholder="optional, 16 to 256 characters"
          value={secret}
          onInput={(event) => setSecret(event.currentTarget.value)}
        />
      </label>
      <p class="muted small">
        An http(s) URL, or an SQS queue or EventBridge bus ARN that the gateway's EVENT_TARGET_ARNS allows. With a secret every POST is
        signed (Standard Webhooks and X-Webhook-Signature); it is never shown again.
      </p>
      <button type="submit" disabled={busy}>
        Add webhook
      </button>
      <ErrorLine error={error} />
    </form>
  );
}

function Deliveries({ webhook, accountId }: { webhook: Webhook; accountId: string | undefined }) {
  const { api, caller } = useSession();
  const [deliveries, setDeliveries] = useState<Delivery[]>();
  const [status, setStatus] = useState<'' | 'pending' | 'failed' | 'delivered'>('');
  const [error, setError] = useState<string>();
  // The deliveries log is an admin route; an account key replays without it.
  const canRead = managesEverything(caller);

  usePolling(
    async () => {
      if (!canRead) return;
      try {
        const answer = await call(
          api.GET('/webhooks/{webhookId}/deliveries', {
            params: { path: { webhookId: webhook.webhookId }, query: { limit: 50, ...(status ? { status } : {}) } },
          }),
        );
        setDeliveries(answer.deliveries);
        setError(undefined);
      } catch (failure) {
        setError(problem(failure));
      }
    },
    5_000,
    [api, webhook.webhookId, status, canRead],
  );

  return (
    <div class="deliveries">
      {canRead && (
        <>
          <label class="inline">
            Delivery status
            <select value={status} onChange={(event) => setStatus(event.currentTarget.value as typeof status)}>
              <option value="">all</option>
              <option value="delivered">delivered</option>
              <option value="pending">pending</option>
              <option value="failed">failed</option>
            </select>
          </label>
          <ErrorLine error={error} />
          {deliveries === undefined ? (
            <p class="muted" role="status">
              Loading deliveries…
            </p>
          ) : deliveries.length === 0 ? (
            <Empty>Nothing sent to this webhook in the last 7 days{status ? ` with status ${status}` : ''}.</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Deliveries to {webhook.url}, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Last attempt</th>
                    <th scope="col">Last error</th>
                  </tr>
                </thead>
                <tbody>
                  {deliveries.map((delivery) => (
                    <tr key={delivery.eventId}>
                      <td>
                        {delivery.event}
                        <br />
                        <code class="small muted">{delivery.eventId}</code>
                      </td>
                      <td>
                        <span class={`delivery delivery-${delivery.status}`}>{delivery.status}</span>
                      </td>
                      <td>{delivery.attempts}</td>
                      <td>{when(delivery.lastAttemptAt)}</td>
                      <td class="small">{delivery.lastError ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
      <Replay webhook={webhook} accountId={accountId} />
    </div>
  );
}

/** A datetime-local value for an instant, in the browser's zone. */
const localInput = (ms: number) => {
  const date = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return date.toISOString().slice(0, 16);
};

function Replay({ webhook, accountId }: { webhook: Webhook; accountId: string | undefined }) {
  const { api } = useSession();
  const [since, setSince] = useState(() => localInput(Date.now() - 60 * 60_000));
  const [until, setUntil] = useState('');
  const [outcome, setOutcome] = useState<string>();
  const [error, setError] = useState<string>();
  return (
    <form
      class="replay inline-form"
      onSubmit={async (event) => {
        event.preventDefault();
        setError(undefined);
        setOutcome(undefined);
        const body = { since: new Date(since).getTime(), ...(until ? { until: new Date(until).getTime() } : {}) };
        try {
          const answer = accountId
            ? await call(
                api.POST('/accounts/{accountId}/webhooks/{webhookId}/replay', {
                  params: { path: { accountId, webhookId: webhook.webhookId } },
                  body,
                }),
              )
            : await call(api.POST('/webhooks/{webhookId}/replay', { params: { path: { webhookId: webhook.webhookId } }, body }));
          setOutcome(answer.queued === 1 ? '1 message queued again.' : `${answer.queued} messages queued again.`);
        } catch (failure) {
          setError(problem(failure));
        }
      }}
    >
      <label>
        Replay from
        <input type="datetime-local" required value={since} onInput={(event) => setSince(event.currentTarget.value)} />
      </label>
      <label>
        Replay until
        <input type="datetime-local" value={until} onInput={(event) => setUntil(event.currentTarget.value)} />
      </label>
      <button type="submit" class="secondary">
        Replay
      </button>
      {outcome && (
        <p role="status" class="small">
          {outcome}
        </p>
      )}
      <ErrorLine error={error} />
    </form>
  );
}
