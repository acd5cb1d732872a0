import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed } from '../errors.js';
import { chatGsi1, chatKey, chatsGsi1pk } from '../keys.js';
import { chatSchema, type Chat } from '../schemas/chat.js';
import { toAttributes } from './attributes.js';
import { queryGsi1, type Page } from './paging.js';
import { ITEM_EXISTS, withoutKeys, type Table } from './table.js';

const parseChat = (item: Record<string, unknown>) => chatSchema.parse(withoutKeys(item));

export async function findChat(table: Table, accountId: string, chatId: string): Promise<Chat | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: chatKey(accountId, chatId) }));
  return result.Item ? parseChat(result.Item) : undefined;
}

/** Chats of an account, most recent `lastMessageTime` first. */
export async function listChats(table: Table, accountId: string, page: Page): Promise<Chat[]> {
  const items = await queryGsi1(table, chatsGsi1pk(accountId), page, 'newest_first');
  return items.map(parseChat);
}

export interface ChatActivity {
  chatId: string;
  timestamp: number;
  /** Used when the chat is new or has no name yet; an existing name is kept. */
  name?: string;
  /**
   * Unread messages it adds (inbound, not from the account itself): true for one, or a count
   * (several messages of the chat written together).
   */
  unread: boolean | number;
}

/**
 * Moves a chat to the top when a message arrives: creates it when absent, advances
 * `lastMessageTime` only forward (an older message delivered late does not reorder the list).
 * Several messages of one chat make one activity: the newest time, the unread ones counted.
 */
export async function recordChatActivity(table: Table, accountId: string, activity: ChatActivity): Promise<void> {
  const key = chatKey(accountId, activity.chatId);
  const gsi = chatGsi1(accountId, activity.chatId, activity.timestamp);
  const increment = typeof activity.unread === 'number' ? activity.unread : activity.unread ? 1 : 0;
  const name = activity.name ?? activity.chatId.split('@')[0] ?? activity.chatId;
  try {
    // Through the raw client: one of these per chat per batch of inbound messages.
    await table.raw.send(
      new UpdateItemCommand({
        TableName: table.name,
        Key: toAttributes(key),
        UpdateExpression:
          'SET chatId = :chatId, #name = if_not_exists(#name, :name), lastMessageTime = :t, gsi1pk = :g1pk, gsi1sk = :g1sk ADD unreadCount :inc',
        ConditionExpression: 'attribute_not_exists(lastMessageTime) OR lastMessageTime <= :t',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: toAttributes({
          ':chatId': activity.chatId,
          ':name': name,
          ':t': activity.timestamp,
          ':g1pk': gsi.gsi1pk,
          ':g1sk': gsi.gsi1sk,
          ':inc': increment,
        }),
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    if (increment > 0) {
      await table.doc.send(
        new UpdateCommand({
          TableName: table.name,
          Key: key,
          UpdateExpression: 'ADD unreadCount :inc',
          ExpressionAttributeValues: { ':inc': increment },
        }),
      );
    }
  }
}

/**
 * Takes back the unread message `recordChatActivity` added for a message that turned out to be
 * a redelivery (the inbound pipeline writes both at once). Counter updates commute, so the
 * count ends right whatever lands first.
 */
export async function retractUnread(table: Table, accountId: string, chatId: string): Promise<void> {
  await table.doc
    .send(
      new UpdateCommand({
        TableName: table.name,
        Key: chatKey(accountId, chatId),
        UpdateExpression: 'ADD unreadCount :minusOne',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':minusOne': -1 },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalCheckFailed(error)) throw error;
    });
}

export async function renameChat(table: Table, accountId: string, chatId: string, name: string): Promise<void> {
  await table.doc
    .send(
      new UpdateCommand({
        TableName: table.name,
        Key: chatKey(accountId, chatId),
        UpdateExpression: 'SET #name = :name',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':name': name },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalCheckFailed(error)) throw error;
    });
}

/**
 * Takes `count` unread messages off a chat once they were read (receipts sent). An ADD, not a
 * SET to 0: a message arriving meanwhile stays unread.
 */
export async function takeUnread(table: Table, accountId: string, chatId: string, count: number): Promise<void> {
  if (count <= 0) return;
  await table.doc
    .send(
      new UpdateCommand({
        TableName: table.name,
        Key: chatKey(accountId, chatId),
        UpdateExpression: 'ADD unreadCount :minus',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':minus': -count },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalCheckFailed(error)) throw error;
    });
}
