import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed } from '../errors.js';
import { isUserJid } from '../jid.js';
import { chatGsi1, chatKey, chatsGsi1From, chatsGsi1pk } from '../keys.js';
import { chatSchema, type Chat } from '../schemas/chat.js';
import { fromAttributes, toAttributes } from './attributes.js';
import { queryGsi1, type Page } from './paging.js';
import { expiryAfter, isExpired, keptSince } from './retention.js';
import { ITEM_EXISTS, withoutKeys, type Table } from './table.js';

const parseChat = (item: Record<string, unknown>) => chatSchema.parse(withoutKeys(item));

export async function findChat(table: Table, accountId: string, chatId: string): Promise<Chat | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: chatKey(accountId, chatId) }));
  return result.Item && !isExpired(result.Item) ? parseChat(result.Item) : undefined;
}

/**
 * Chats of an account, most recent `lastMessageTime` first. With a message retention a chat
 * expires with its last message (docs/configuration.md, Retention): one whose messages have all
 * expired is no longer listed.
 */
export async function listChats(table: Table, accountId: string, page: Page): Promise<Chat[]> {
  const since = keptSince(table.retention?.messageDays);
  const items = await queryGsi1(table, chatsGsi1pk(accountId), page, 'newest_first', {
    from: since === undefined ? undefined : chatsGsi1From(since),
  });
  return items.map(parseChat);
}

/**
 * What happens to a chat: a message's time (`at`: the chat is created when absent, and its
 * `lastMessageTime` only moves forward, so a message delivered late does not reorder the list),
 * unread messages added or taken off, a new name (a pushName, a group's subject). Without `at`
 * the change applies only to a chat that exists.
 */
export interface ChatChange {
  at?: number;
  unread?: number;
  /** The phone's own unread count (history): the count becomes at least this, after `unread`. */
  unreadAtLeast?: number;
  name?: string;
}

/**
 * A chat with no name yet is named by its number: `+<phone>` for a person (as the contact book
 * shows one without a name, core/schemas/contact.ts), the user part of its JID otherwise.
 */
const defaultName = (chatId: string) => {
  const user = chatId.split('@')[0] ?? chatId;
  return isUserJid(chatId) ? `+${user}` : user;
};

/**
 * The chat after `change` (undefined: it does not exist, and the change does not create it). A
 * chat whose last message is older than `keptSinceMs` has expired with it (retention.ts), even
 * if DynamoDB has not deleted it yet: it is treated as absent, so it starts again from zero.
 */
export function applyChatChange(chat: Chat | undefined, chatId: string, change: ChatChange, keptSinceMs?: number): Chat | undefined {
  const unread = change.unread ?? 0;
  const atLeast = (count: number) => Math.max(count, change.unreadAtLeast ?? count);
  if (!chat || (keptSinceMs !== undefined && chat.lastMessageTime < keptSinceMs)) {
    if (change.at === undefined) return undefined;
    return { chatId, name: change.name ?? defaultName(chatId), unreadCount: atLeast(unread), lastMessageTime: change.at };
  }
  return {
    chatId,
    name: change.name ?? chat.name,
    unreadCount: atLeast(chat.unreadCount + unread),
    lastMessageTime: change.at === undefined ? chat.lastMessageTime : Math.max(chat.lastMessageTime, change.at),
  };
}

/** The stored item of a chat (its key, the index key that orders the list, and its expiry with its last message). */
export function chatItem(accountId: string, chat: Chat, messageDays?: number): Record<string, unknown> {
  return {
    ...chatKey(accountId, chat.chatId),
    ...chatGsi1(accountId, chat.chatId, chat.lastMessageTime),
    ...expiryAfter(chat.lastMessageTime, messageDays),
    ...chat,
  };
}

/**
 * Applies a change in one conditional write, whatever the chat holds (counter updates commute),
 * and answers the chat as it is now (undefined when it does not exist). Through the raw client:
 * the inbound path writes a chat this way when it knows nothing of it yet (chat-writer.ts).
 */
export async function updateChat(table: Table, accountId: string, chatId: string, change: ChatChange): Promise<Chat | undefined> {
  const key = toAttributes(chatKey(accountId, chatId));
  const unread = change.unread ?? 0;
  const renamed = change.name !== undefined;
  const messageDays = table.retention?.messageDays;
  const since = keptSince(messageDays);
  /** With a retention, the condition that the stored chat has not expired (its last message kept). */
  const kept = since === undefined ? '' : ' AND lastMessageTime >= :kept';
  const keptValue = since === undefined ? {} : { ':kept': since };
  const update = (expression: string, condition: string, values: Record<string, unknown>, named: boolean) =>
    table.raw
      .send(
        new UpdateItemCommand({
          TableName: table.name,
          Key: key,
          UpdateExpression: expression,
          ConditionExpression: condition,
          ...(named ? { ExpressionAttributeNames: { '#name': 'name' } } : {}),
          ExpressionAttributeValues: toAttributes(values),
          ReturnValues: 'ALL_NEW',
        }),
      )
      .then(
        (result) => (result.Attributes ? parseChat(fromAttributes(result.Attributes)) : undefined),
        (error: unknown) => {
          if (isConditionalCheckFailed(error)) return 'condition_failed' as const;
          throw error;
        },
      );
  /** The count and the name only, on a chat that exists. */
  const adjust = async () => {
    const chat = await update(
      `${renamed ? 'SET #name = :name ' : ''}ADD unreadCount :inc`,
      `${ITEM_EXISTS}${kept}`,
      { ':inc': unread, ...(renamed ? { ':name': change.name } : {}), ...keptValue },
      renamed,
    );
    return chat === 'condition_failed' ? undefined : chat;
  };
  if (change.at === undefined) return adjust();
  const gsi = chatGsi1(accountId, chatId, change.at);
  const expiry = expiryAfter(change.at, messageDays).expiresAt;
  const moved = await update(
    `SET chatId = :chatId, #name = ${renamed ? ':name' : 'if_not_exists(#name, :name)'}, lastMessageTime = :t, gsi1pk = :g1pk, gsi1sk = :g1sk${expiry === undefined ? '' : ', expiresAt = :expiresAt'} ADD unreadCount :inc`,
    `(attribute_not_exists(lastMessageTime) OR lastMessageTime <= :t)${since === undefined ? '' : ' AND (attribute_not_exists(lastMessageTime) OR lastMessageTime >= :kept)'}`,
    {
      ':chatId': chatId,
      ':name': change.name ?? defaultName(chatId),
      ':t': change.at,
      ':g1pk': gsi.gsi1pk,
      ':g1sk': gsi.gsi1sk,
      ':inc': unread,
      ...(expiry === undefined ? {} : { ':expiresAt': expiry }),
      ...keptValue,
    },
    true,
  );
  if (moved !== 'condition_failed') return moved;
  // A newer message is there already: the count and the name still change, the order does not.
  const adjusted = await adjust();
  if (adjusted || since === undefined) return adjusted;
  // The stored chat expired with its last message and DynamoDB has not deleted it yet: it
  // starts again, as a chat that did not exist (its old count went with its messages).
  const fresh = applyChatChange(undefined, chatId, change);
  if (!fresh) return undefined;
  await table.doc.send(new PutCommand({ TableName: table.name, Item: chatItem(accountId, fresh, messageDays) }));
  return fresh;
}
