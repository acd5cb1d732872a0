import { useState } from 'preact/hooks';
import { type Chat, call, problem } from '../api.js';
import { personOf, when } from '../format.js';
import { usePolling } from '../polling.js';
import { go, href } from '../route.js';
import { useSession } from '../session-context.js';
import { ChatView } from './chat.js';
import { Empty, ErrorLine } from './parts.js';

/** The account's chats, newest first, beside the open one (one column on a phone). */
export function ChatsPanel({ accountId, chatId }: { accountId: string; chatId?: string | undefined }) {
  const { api } = useSession();
  const [chats, setChats] = useState<Chat[]>();
  const [error, setError] = useState<string>();

  usePolling(
    async () => {
      try {
        const answer = await call(api.GET('/accounts/{accountId}/chats', { params: { path: { accountId }, query: { limit: 50 } } }));
        setChats(answer.chats);
        setError(undefined);
      } catch (failure) {
        setError(problem(failure));
      }
    },
    // The open chat polls its own messages; the list only needs to catch new chats and counts.
    chatId ? 10_000 : 3_000,
    [api, accountId, chatId],
  );

  const open = chats?.find((chat) => chat.chatId === chatId);
  return (
    <div class={`chats ${chatId ? 'has-open-chat' : ''}`}>
      <div class="chat-list">
        <NewChat accountId={accountId} />
        <ErrorLine error={error} />
        {chats === undefined ? (
          <p class="muted" role="status">
            Loading chats…
          </p>
        ) : chats.length === 0 ? (
          <Empty>No chats yet. Messages this account sends or receives start them.</Empty>
        ) : (
          <ul aria-label="Chats">
            {chats.map((chat) => (
              <li key={chat.chatId}>
                <a
                  href={href({ view: 'account', accountId, tab: 'chats', chatId: chat.chatId })}
                  aria-current={chat.chatId === chatId ? 'true' : undefined}
                  class="chat-link"
                >
                  <span class="chat-name">{chat.name || personOf(chat.chatId)}</span>
                  <span class="muted small">{when(chat.lastMessageTime)}</span>
                  {chat.unreadCount > 0 && (
                    <span class="unread">
                      {chat.unreadCount}
                      <span class="visually-hidden"> unread</span>
                    </span>
                  )}
                </a>
              </li>
            ))}
          </ul>
        )}
      </div>
      {chatId ? (
        <ChatView
          key={chatId}
          accountId={accountId}
          chatId={chatId}
          name={open?.name ?? personOf(chatId)}
          unread={open?.unreadCount ?? 0}
          onRead={() => setChats((listed) => listed?.map((chat) => (chat.chatId === chatId ? { ...chat, unreadCount: 0 } : chat)))}
        />
      ) : (
        <div class="chat-placeholder muted">Choose a chat to read it and write.</div>
      )}
    </div>
  );
}

/** Starts a chat with a number that has none yet. */
function NewChat({ accountId }: { accountId: string }) {
  const [number, setNumber] = useState('');
  const [error, setError] = useState<string>();
  return (
    <form
      class="new-chat"
      onSubmit={(event) => {
        event.preventDefault();
        const digits = number.replace(/[\s+()-]/g, '');
        if (!/^\d{6,15}$/.test(digits)) {
          setError('A number with its country code, digits only.');
          return;
        }
        setError(undefined);
        setNumber('');
        go({ view: 'account', accountId, tab: 'chats', chatId: `${digits}@s.whatsapp.net` });
      }}
    >
      <label>
        New chat with
        <input
          type="tel"
          inputMode="tel"
          placeholder="+1 555 123 4567"
          value={number}
          onInput={(event) => setNumber(event.currentTarget.value)}
        />
      </label>
      <button type="submit" class="secondary">
        Open chat
      </button>
      <ErrorLine error={error} />
    </form>
  );
}
