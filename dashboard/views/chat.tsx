import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { call, type Message, problem } from '../api.js';
import { personOf, size, when } from '../format.js';
import { usePolling } from '../polling.js';
import { href } from '../route.js';
import { useSession } from '../session-context.js';
import { Composer } from './composer.js';
import { Empty, ErrorLine } from './parts.js';

const PAGE = 50;

/** One chat: its latest messages, newest at the bottom, new ones as they come; the composer. */
export function ChatView({
  accountId,
  chatId,
  name,
  unread,
  onRead,
}: {
  accountId: string;
  chatId: string;
  name: string;
  unread: number;
  /** The chat was marked read: its unread count is 0 now, not at the list's next poll. */
  onRead: () => void;
}) {
  const { api } = useSession();
  const [messages, setMessages] = useState<Message[]>();
  const [error, setError] = useState<string>();
  const [replyTo, setReplyTo] = useState<Message>();
  const list = useRef<HTMLOListElement>(null);
  const stickToBottom = useRef(true);

  const refresh = async () => {
    try {
      const answer = await call(
        api.GET('/accounts/{accountId}/chats/{chatId}/messages', { params: { path: { accountId, chatId }, query: { limit: PAGE } } }),
      );
      // The API answers newest first; a chat reads top to bottom.
      setMessages([...answer.messages].reverse());
      setError(undefined);
    } catch (failure) {
      setError(problem(failure));
    }
  };
  usePolling(refresh, 2_000, [api, accountId, chatId]);

  // Opening a chat reads it, as on the phone: read receipts go out and the unread count clears.
  useEffect(() => {
    if (unread > 0)
      void call(api.POST('/accounts/{accountId}/chats/{chatId}/read', { params: { path: { accountId, chatId } } }))
        .then(onRead)
        .catch(() => undefined);
  }, [api, accountId, chatId, unread > 0]);

  useLayoutEffect(() => {
    const element = list.current;
    if (element && stickToBottom.current) element.scrollTop = element.scrollHeight;
  }, [messages]);

  const byId = new Map(messages?.map((message) => [message.messageId, message]));
  return (
    <section class="chat" aria-labelledby="chat-title">
      <header class="chat-head">
        <a class="back" href={href({ view: 'account', accountId, tab: 'chats' })}>
          ‹ Chats list
        </a>
        <h2 id="chat-title">{name}</h2>
        <span class="muted small">{personOf(chatId)}</span>
      </header>
      <ErrorLine error={error} />
      <ol
        class="messages"
        ref={list}
        aria-label={`Messages with ${name}`}
        onScroll={(event) => {
          const element = event.currentTarget;
          stickToBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
        }}
        // A picture shown after its message grows the list: the newest message stays in view.
        onLoadCapture={(event) => {
          const element = event.currentTarget;
          if (stickToBottom.current) element.scrollTop = element.scrollHeight;
        }}
      >
        {messages === undefined ? (
          <li class="muted" role="status">
            Loading messages…
          </li>
        ) : messages.length === 0 ? (
          <li>
            <Empty>No messages yet. Write the first one below.</Empty>
          </li>
        ) : (
          messages.map((message) => (
            <MessageItem
              key={message.messageId}
              accountId={accountId}
              message={message}
              quoted={message.quotedMessageId ? byId.get(message.quotedMessageId) : undefined}
              onReply={() => setReplyTo(message)}
            />
          ))
        )}
      </ol>
      <Composer
        accountId={accountId}
        chatId={chatId}
        replyTo={replyTo}
        onCancelReply={() => setReplyTo(undefined)}
        onSent={async () => {
          setReplyTo(undefined);
          stickToBottom.current = true;
          await refresh();
        }}
      />
    </section>
  );
}

/** What a message says, in a few words (a reply's quote, the reply button's name). */
export function gist(message: Message): string {
  const words = message.text ?? message.caption ?? message.fileName ?? message.name;
  const text = words ? words.slice(0, 60) : message.type;
  return words && words.length > 60 ? `${text}…` : text;
}

const STATUS_WORDS: Record<string, string> = {
  pending: 'sending',
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  played: 'played',
  failed: 'not sent',
};

function MessageItem({
  accountId,
  message,
  quoted,
  onReply,
}: {
  accountId: string;
  message: Message;
  quoted: Message | undefined;
  onReply: () => void;
}) {
  return (
    <li class={`message ${message.fromMe ? 'mine' : 'theirs'}`}>
      <div class="bubble">
        {!message.fromMe && message.participant && <span class="sender small">{personOf(message.participant)}</span>}
        {message.quotedMessageId && <blockquote class="quote small">{quoted ? gist(quoted) : 'a message not shown here'}</blockquote>}
        {message.revoked ? <em class="muted">This message was deleted.</em> : <Body accountId={accountId} message={message} />}
        {message.reactions && message.reactions.length > 0 && (
          <span class="reactions">
            <span class="visually-hidden">Reactions: </span>
            {message.reactions.map((reaction) => reaction.emoji).join(' ')}
          </span>
        )}
        <span class="meta small">
          <time dateTime={new Date(message.timestamp).toISOString()}>{when(message.timestamp)}</time>
          {message.fromMe && message.status && (
            <span class={`sent-status sent-${message.status}`}>{STATUS_WORDS[message.status] ?? message.status}</span>
          )}
        </span>
      </div>
      {!message.revoked && (
        <button type="button" class="quiet reply" aria-label={`Reply to ${gist(message)}`} onClick={onReply}>
          Reply
        </button>
      )}
    </li>
  );
}

function Body({ accountId, message }: { accountId: string; message: Message }) {
  if (message.type === 'image' && message.hasMedia) return <ImagePreview accountId={accountId} message={message} />;
  if (message.hasMedia)
    return (
      <>
        <MediaDownload accountId={accountId} message={message} />
        {message.caption && <p class="text">{message.caption}</p>}
      </>
    );
  if (message.type === 'location')
    return (
      <p class="text">
        📍 {message.name ?? 'Location'} ({message.latitude?.toFixed(5)}, {message.longitude?.toFixed(5)})
      </p>
    );
  if (message.type === 'poll')
    return (
      <p class="text">
        📊 {message.name}: {message.pollOptions?.join(' · ')}
      </p>
    );
  if (message.text !== undefined) return <p class="text">{message.text}</p>;
  return <p class="text muted">({message.type} message)</p>;
}

/** Media are behind the key: fetched with it, shown from a blob: URL. */
function useMedia(accountId: string, messageId: string, wanted: boolean) {
  const { api } = useSession();
  const [url, setUrl] = useState<string>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    if (!wanted) return;
    let made: string | undefined;
    let cancelled = false;
    call(api.GET('/accounts/{accountId}/messages/{messageId}/media', { params: { path: { accountId, messageId } }, parseAs: 'blob' }))
      .then((blob) => {
        if (cancelled) return;
        made = URL.createObjectURL(blob as unknown as Blob);
        setUrl(made);
      })
      .catch((failure: unknown) => !cancelled && setError(problem(failure)));
    return () => {
      cancelled = true;
      if (made) URL.revokeObjectURL(made);
    };
  }, [api, accountId, messageId, wanted]);
  return { url, error };
}

function ImagePreview({ accountId, message }: { accountId: string; message: Message }) {
  const { url, error } = useMedia(accountId, message.messageId, true);
  return (
    <figure class="image">
      {url ? (
        <img src={url} alt={message.caption ? `Image: ${message.caption}` : 'Image'} loading="lazy" />
      ) : (
        <span class="muted small">{error ?? 'Loading image…'}</span>
      )}
      {message.caption && <figcaption class="text">{message.caption}</figcaption>}
    </figure>
  );
}

function MediaDownload({ accountId, message }: { accountId: string; message: Message }) {
  const [wanted, setWanted] = useState(false);
  const { url, error } = useMedia(accountId, message.messageId, wanted);
  const label = message.fileName ?? `${message.type} file`;
  const link = useRef<HTMLAnchorElement>(null);
  useEffect(() => {
    if (url) link.current?.click();
  }, [url]);
  return (
    <p class="file">
      <span aria-hidden="true">📎</span> {label} <span class="muted small">{size(message.fileLength)}</span>{' '}
      {url ? (
        <a ref={link} href={url} download={message.fileName ?? `${message.messageId}`}>
          Save {label}
        </a>
      ) : (
        <button type="button" class="quiet" onClick={() => setWanted(true)} aria-label={`Download ${label}`}>
          Download
        </button>
      )}
      {error && <span class="error small"> {error}</span>}
    </p>
  );
}
