import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { messageGsi1, messageKey, messagesGsi1From, messagesGsi1pk } from '../keys.js';
import { statusesBefore } from '../message-status.js';
import { messageSchema, type Message, type MessageStatus } from '../schemas/message.js';
import { toAttributes } from './attributes.js';
import { queryGsi1, type Page } from './paging.js';
import { expiryAfter, isExpired, keptSince } from './retention.js';
import { ITEM_ABSENT, ITEM_EXISTS, writeIfCondition, type Table } from './table.js';
import { isConditionalCheckFailed } from '../errors.js';

/**
 * The schema is a plain z.object, which leaves out the key attributes (pk, sk, gsi1pk, gsi1sk)
 * with every other unknown one: copying the item without them first doubled the cost of a page.
 */
type Reaction = NonNullable<Message['reactions']>[number];

const parseMessage = (item: Record<string, unknown>) => messageSchema.parse(item);

/**
 * Bookkeeping kept on the message item and never part of the message itself (docs/guarantees.md).
 * `eventPending`: the message's webhook event is due and not known to be enqueued yet (the
 * outbox marker: the row and the marker are one write, so a stored message never loses its
 * event to a crash); removed once the event is enqueued.
 * `eventHeldByRecord`: the event was due when the row was written and the message's write-ahead
 * record held the obligation instead of the row (the record is deleted only after the enqueue):
 * the event may be pending as long as a write-ahead record of the message is left. It costs no
 * write of its own: only a redelivery that enqueues the event again removes it.
 */
export interface MessageMarks {
  eventPending?: boolean;
  eventHeldByRecord?: boolean;
}

/** The stored row; with a retention (retention.ts) it expires `messageDays` after the message's time. */
export const messageItem = (accountId: string, message: Message, marks: MessageMarks = {}, messageDays?: number) => ({
  ...messageKey(accountId, message.messageId),
  ...messageGsi1(accountId, message.chatId, message.timestamp, message.messageId),
  ...expiryAfter(message.timestamp, messageDays),
  ...message,
  ...(marks.eventPending ? { eventPending: true } : {}),
  ...(marks.eventHeldByRecord ? { eventHeldByRecord: true } : {}),
});

const marksOf = (item: Record<string, unknown>): MessageMarks => ({
  ...(item.eventPending === true ? { eventPending: true } : {}),
  ...(item.eventHeldByRecord === true ? { eventHeldByRecord: true } : {}),
});

/** Stores (or replaces) a message; the same message id is one item, so redelivery is harmless. */
export async function putMessage(table: Table, accountId: string, message: Message, marks?: MessageMarks): Promise<void> {
  await table.doc.send(
    new PutCommand({
      TableName: table.name,
      Item: messageItem(accountId, message, marks, table.retention?.messageDays),
    }),
  );
}

/**
 * Stores a message unless its id is stored already: one conditional write that both stores and
 * tells a redelivery apart. False when the message was there (nothing is changed then). Through
 * the raw client: on the inbound path, a message that arrives alone is stored this way.
 */
export async function putMessageIfAbsent(table: Table, accountId: string, message: Message, marks?: MessageMarks): Promise<boolean> {
  return writeIfCondition(
    table.raw.send(
      new PutItemCommand({
        TableName: table.name,
        Item: toAttributes(messageItem(accountId, message, marks, table.retention?.messageDays)),
        ConditionExpression: ITEM_ABSENT,
      }),
    ),
  );
}

export async function findMessage(table: Table, accountId: string, messageId: string): Promise<Message | undefined> {
  const result = await table.doc.send(new GetCommand({ TableName: table.name, Key: messageKey(accountId, messageId) }));
  return result.Item && !isExpired(result.Item) ? parseMessage(result.Item) : undefined;
}

/** A stored message with its marks (strongly consistent: the connector decides on them). */
export async function findMessageRecord(
  table: Table,
  accountId: string,
  messageId: string,
): Promise<{ message: Message; marks: MessageMarks } | undefined> {
  const result = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: messageKey(accountId, messageId), ConsistentRead: true }),
  );
  if (!result.Item) return undefined;
  return { message: parseMessage(result.Item), marks: marksOf(result.Item) };
}

/** The message's webhook event is enqueued: the outbox marks go (both kinds, see MessageMarks). */
export async function clearEventPending(table: Table, accountId: string, messageId: string): Promise<void> {
  await writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: 'REMOVE eventPending, eventHeldByRecord',
        ConditionExpression: ITEM_EXISTS,
      }),
    ),
  );
}

/** Messages of one chat, newest first. */
export async function listMessages(table: Table, accountId: string, chatId: string, page: Page): Promise<Message[]> {
  const since = keptSince(table.retention?.messageDays);
  const items = await queryGsi1(table, messagesGsi1pk(accountId, chatId), page, 'newest_first', {
    from: since === undefined ? undefined : messagesGsi1From(since),
  });
  return items.map(parseMessage);
}

/** Adds a reaction to a stored message; false when the message is not stored. */
export async function addReaction(
  table: Table,
  accountId: string,
  messageId: string,
  reaction: { from: string; emoji: string; timestamp: number },
): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: 'SET reactions = list_append(if_not_exists(reactions, :empty), :reaction)',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':empty': [], ':reaction': [reaction] },
      }),
    ),
  );
}

/**
 * Moves a message the account sent to `status`, unless it is there or beyond already (a receipt
 * never moves it backwards): one conditional write, no read. The stored chat id when it moved,
 * undefined when it did not (or the message is not stored, or not the account's own).
 */
export async function advanceMessageStatus(
  table: Table,
  accountId: string,
  messageId: string,
  status: MessageStatus,
  at: number,
): Promise<string | undefined> {
  const before = statusesBefore(status);
  const values: Record<string, unknown> = { ':status': status, ':at': at, ':true': true };
  before.forEach((earlier, index) => {
    values[`:s${index}`] = earlier;
  });
  const earlierList = before.map((_, index) => `:s${index}`).join(', ');
  try {
    const result = await table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: 'SET #status = :status, statusAt = :at',
        ConditionExpression: `${ITEM_EXISTS} AND fromMe = :true AND (attribute_not_exists(#status)${before.length ? ` OR #status IN (${earlierList})` : ''})`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    const chatId = result.Attributes?.chatId;
    return typeof chatId === 'string' ? chatId : undefined;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return undefined;
    throw error;
  }
}

/**
 * Records one group member's receipt on a message the account sent to a group (the members
 * that have it, and those that read it, are sets on the row: a repeated receipt changes
 * nothing). Answers both sets after the write; undefined when the message is not stored as the
 * account's own. The sets are bookkeeping, not part of the message.
 */
export async function addGroupReceipt(
  table: Table,
  accountId: string,
  messageId: string,
  kind: 'delivered' | 'read',
  userJid: string,
): Promise<{ deliveredTo: Set<string>; readBy: Set<string>; status?: MessageStatus } | undefined> {
  try {
    const result = await table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: `ADD ${kind === 'read' ? 'readBy' : 'deliveredTo'} :user`,
        ConditionExpression: `${ITEM_EXISTS} AND fromMe = :true`,
        ExpressionAttributeValues: { ':user': new Set([userJid]), ':true': true },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const asSet = (value: unknown) => (value instanceof Set ? new Set([...value].map(String)) : new Set<string>());
    const status = messageSchema.shape.status.parse(result.Attributes?.status);
    return { deliveredTo: asSet(result.Attributes?.deliveredTo), readBy: asSet(result.Attributes?.readBy), ...(status ? { status } : {}) };
  } catch (error) {
    if (isConditionalCheckFailed(error)) return undefined;
    throw error;
  }
}

/** Replaces the reactions of a stored message (none: removed); false when not stored. */
export async function setReactions(table: Table, accountId: string, messageId: string, reactions: Reaction[]): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: reactions.length > 0 ? 'SET reactions = :reactions' : 'REMOVE reactions',
        ConditionExpression: ITEM_EXISTS,
        ...(reactions.length > 0 ? { ExpressionAttributeValues: { ':reactions': reactions } } : {}),
      }),
    ),
  );
}

/** Replaces the votes kept on a stored poll (none: removed), leaving the rest of the row as it is. */
export async function setPollVotes(table: Table, accountId: string, messageId: string, votes: Message['pollVotes']): Promise<boolean> {
  const some = votes !== undefined && votes.length > 0;
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: some ? 'SET pollVotes = :votes' : 'REMOVE pollVotes',
        ConditionExpression: ITEM_EXISTS,
        ...(some ? { ExpressionAttributeValues: { ':votes': votes } } : {}),
      }),
    ),
  );
}

/** New text and/or caption of a stored message (an edit); false when not stored. */
export async function editMessageContent(
  table: Table,
  accountId: string,
  messageId: string,
  content: { text?: string; caption?: string },
): Promise<boolean> {
  const sets: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (content.text !== undefined) {
    sets.push('#text = :text');
    names['#text'] = 'text';
    values[':text'] = content.text;
  }
  if (content.caption !== undefined) {
    sets.push('caption = :caption');
    values[':caption'] = content.caption;
  }
  if (sets.length === 0) return true;
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: ITEM_EXISTS,
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
      }),
    ),
  );
}

/** Marks a message deleted for everyone: its text and caption are dropped. False when not stored. */
export async function markMessageRevoked(table: Table, accountId: string, messageId: string): Promise<boolean> {
  return writeIfCondition(
    table.doc.send(
      new UpdateCommand({
        TableName: table.name,
        Key: messageKey(accountId, messageId),
        UpdateExpression: 'SET revoked = :true REMOVE #text, caption',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#text': 'text' },
        ExpressionAttributeValues: { ':true': true },
      }),
    ),
  );
}
