import { useEffect, useRef, useState } from 'preact/hooks';
import { call, problem } from '../api.js';
import { when } from '../format.js';
import { usePolling } from '../polling.js';
import { useSession } from '../session-context.js';
import { ErrorLine } from './parts.js';

/**
 * Linking a phone: the QR while the account waits for a scan (a new image as WhatsApp rotates
 * it), or a pairing code for a phone number. The account's status above turns `connected` by
 * itself once the phone has linked.
 */
export function Linking({ accountId, status, hasQr }: { accountId: string; status: string; hasQr: boolean }) {
  return (
    <div class="linking panel">
      <h2>Link a phone</h2>
      <div class="linking-ways">
        <QrCode accountId={accountId} hasQr={hasQr} status={status} />
        <PairingCode accountId={accountId} />
      </div>
    </div>
  );
}

function QrCode({ accountId, hasQr, status }: { accountId: string; hasQr: boolean; status: string }) {
  const { api } = useSession();
  const [image, setImage] = useState<{ url: string; expiresAt?: number }>();
  const shown = useRef<string | undefined>(undefined);

  // The QR text decides whether the image changed: one small JSON call per round, the image only
  // when WhatsApp gave a new code.
  usePolling(
    async () => {
      if (!hasQr) return;
      const current = await call(api.GET('/accounts/{accountId}/qr', { params: { path: { accountId } } }));
      // Asked without a format the API answers JSON (the type also lists the image forms).
      if (typeof current !== 'object' || !('qr' in current) || current.qr === shown.current) return;
      const png = await call(
        api.GET('/accounts/{accountId}/qr', { params: { path: { accountId }, query: { format: 'png' } }, parseAs: 'blob' }),
      );
      shown.current = current.qr;
      setImage((previous) => {
        if (previous) URL.revokeObjectURL(previous.url);
        return { url: URL.createObjectURL(png as Blob), expiresAt: current.expiresAt };
      });
    },
    2_000,
    [api, accountId, hasQr],
  );
  useEffect(() => () => image && URL.revokeObjectURL(image.url), [image]);

  if (!hasQr || !image)
    return (
      <div class="qr-box">
        <p class="muted">
          {status === 'connecting' || status === 'reconnecting'
            ? 'Waiting for the QR code…'
            : 'No QR code to scan. Connect the account to get one.'}
        </p>
      </div>
    );
  return (
    <figure class="qr-box">
      <img src={image.url} alt={`QR code for ${accountId}`} width={240} height={240} />
      <figcaption>
        On the phone: WhatsApp › Settings › Linked devices › Link a device, then scan this code.
        {image.expiresAt && <span class="muted small"> A new code comes by {when(image.expiresAt)}.</span>}
      </figcaption>
    </figure>
  );
}

function PairingCode({ accountId }: { accountId: string }) {
  const { api } = useSession();
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState<{ code: string; expiresAt: number }>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="pairing"
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const answer = await call(
            api.POST('/accounts/{accountId}/pairing-code', { params: { path: { accountId } }, body: { phoneNumber: phone } }),
          );
          setCode({ code: answer.code, expiresAt: answer.expiresAt });
        } catch (failure) {
          setError(problem(failure));
        } finally {
          setBusy(false);
        }
      }}
    >
      <p>Or link with the phone number instead:</p>
      <label>
        Phone number
        <input
          name="phoneNumber"
          type="tel"
          inputMode="tel"
          placeholder="+1 555 123 4567"
          autocomplete="off"
          required
          value={phone}
          onInput={(event) => setPhone(event.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={busy}>
        Get pairing code
      </button>
      <ErrorLine error={error} />
      {code && (
        <p class="pairing-code" aria-live="polite">
          Enter <strong>{`${code.code.slice(0, 4)}-${code.code.slice(4)}`}</strong> on the phone: WhatsApp › Linked devices › Link with
          phone number. <span class="muted small">Valid until {when(code.expiresAt)}.</span>
        </p>
      )}
    </form>
  );
}
