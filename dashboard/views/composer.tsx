import { useRef, useState } from 'preact/hooks';
import { formDataOf } from '../../client/index.js';
import { call, type Message, problem } from '../api.js';
import { size } from '../format.js';
import { useSession } from '../session-context.js';
import { gist } from './chat.js';
import { ErrorLine } from './parts.js';

type FileKind = 'image' | 'video' | 'audio' | 'document';

/** Which send route a chosen file goes to, by its type (the API checks the bytes again). */
function kindOf(file: File): FileKind {
  if (/^image\/(jpeg|png|gif)$/.test(file.type)) return 'image';
  if (/^video\/(mp4|webm)$/.test(file.type)) return 'video';
  if (/^audio\//.test(file.type)) return 'audio';
  return 'document';
}

/** Text, a file with the text as its caption, or a reply to a message. */
export function Composer({
  accountId,
  chatId,
  replyTo,
  onCancelReply,
  onSent,
}: {
  accountId: string;
  chatId: string;
  replyTo: Message | undefined;
  onCancelReply: () => void;
  onSent: () => Promise<void>;
}) {
  const { api } = useSession();
  const [text, setText] = useState('');
  const [file, setFile] = useState<File>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const fileInput = useRef<HTMLInputElement>(null);
  const account = { path: { accountId } };

  const sendFile = async (chosen: File, caption: string) => {
    const kind = kindOf(chosen);
    // Audio carries no caption on WhatsApp: the text goes after it as its own message.
    const captioned = caption && kind !== 'audio' ? { caption } : {};
    const multipart = { params: account, bodySerializer: formDataOf };
    if (kind === 'image')
      await call(api.POST('/accounts/{accountId}/message/send/image', { ...multipart, body: { to: chatId, image: chosen, ...captioned } }));
    else if (kind === 'video')
      await call(api.POST('/accounts/{accountId}/message/send/video', { ...multipart, body: { to: chatId, video: chosen, ...captioned } }));
    else if (kind === 'audio')
      await call(api.POST('/accounts/{accountId}/message/send/audio', { ...multipart, body: { to: chatId, audio: chosen } }));
    else
      await call(
        api.POST('/accounts/{accountId}/message/send/document', { ...multipart, body: { to: chatId, document: chosen, ...captioned } }),
      );
    if (caption && kind === 'audio') await sendText(caption);
  };
  const sendText = async (message: string) => {
    if (replyTo)
      await call(
        api.POST('/accounts/{accountId}/message/reply', {
          params: account,
          body: { to: chatId, message, quotedMessageId: replyTo.messageId },
        }),
      );
    else await call(api.POST('/accounts/{accountId}/message/send', { params: account, body: { to: chatId, message } }));
  };

  const send = async () => {
    const message = text.trim();
    if (!message && !file) return;
    setBusy(true);
    setError(undefined);
    try {
      if (file) await sendFile(file, message);
      else await sendText(message);
      setText('');
      setFile(undefined);
      if (fileInput.current) fileInput.current.value = '';
      await onSent();
    } catch (failure) {
      setError(problem(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      {replyTo && (
        <div class="replying small">
          Replying to “{gist(replyTo)}”{file ? ' (a file goes without the quote)' : ''}
          <button type="button" class="quiet" onClick={onCancelReply}>
            Cancel reply
          </button>
        </div>
      )}
      {file && (
        <div class="attached small">
          {file.name} <span class="muted">{size(file.size)}</span>
          <button
            type="button"
            class="quiet"
            onClick={() => {
              setFile(undefined);
              if (fileInput.current) fileInput.current.value = '';
            }}
          >
            Remove file
          </button>
        </div>
      )}
      <div class="composer-row">
        <span class="file-pick">
          {/* Drawn, not an emoji: the same paper clip whatever fonts the system has. */}
          <svg aria-hidden="true" viewBox="0 0 24 24" width="20" height="20">
            <path d="M16.5 8v8.5a4.5 4.5 0 0 1-9 0V6a3 3 0 0 1 6 0v9a1.5 1.5 0 0 1-3 0V8" />
          </svg>
          <input ref={fileInput} type="file" aria-label="Attach file" onChange={(event) => setFile(event.currentTarget.files?.[0])} />
        </span>
        <label class="message-field">
          <span class="visually-hidden">Message</span>
          <textarea
            rows={1}
            placeholder={file ? 'Caption (optional)' : 'Write a message'}
            value={text}
            onInput={(event) => setText(event.currentTarget.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
                event.preventDefault();
                void send();
              }
            }}
          />
        </label>
        <button type="submit" disabled={busy || (!text.trim() && !file)}>
          Send
        </button>
      </div>
      <ErrorLine error={error} />
    </form>
  );
}
