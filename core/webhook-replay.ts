import { ACCOUNTS_GSI1PK, chatsGsi1From, chatsGsi1pk, messagesGsi1Range, messagesGsi1pk } from './keys.js';
import { messageEventFor } from './message-event.js';
import type { Queues } from './queues.js';
import { messageSchema } from './schemas/message.js';
import { webhookSelects, type WebhookRegistration } from './schemas/webhook.js';
import { gsi1RangePages } from './store/paging.js';
import type { Table } from './store/table.js';

export interface ReplayDeps {
  table: Table;
  queues: Pick<Queues, 'sendWebhookEvent'>;
  /** WEBHOOK_INCLUDE_FROM_ME: the account's own messages were delivered too, so they are replayed too. */
  includeFromMe: boolean;
  /** Items per DynamoDB page: what is held in memory at once. */
  pageSize?: number;
}

/** Unix ms, both ends included. `accountId` narrows a global webhook's replay to one account. */
export interface ReplayRange {
  since: number;
  until: number;
  accountId?: string | undefined;
}

const DEFAULT_PAGE_SIZE = 100;
/**
 * Chats read and sent at once: their pages share SQS batches and round trips overlap, while at
 * most this many pages of messages are in memory.
 */
const CHATS_AT_ONCE = 8;

/**
 * Enqueues again the `message` events of the stored messages in a time range, for one webhook
 * (`webhookId` set: the worker posts them to it alone) and with their original event ids, so
 * the receiver sees the X-Webhook-Id it saw the first time (docs/webhooks.md, "Replay").
 *
 * Everything is read in pages through gsi1, never a whole account at once: the accounts in the
 * webhook's scope, each account's chats whose last message is at `since` or later (a chat with
 * an older last message has nothing in the range), and each chat's messages in the range. Chats
 * are read oldest activity first: a chat that gets a message meanwhile moves to the end of the
 * index and is still reached (its id is remembered, so it is not replayed twice). Up to
 * CHATS_AT_ONCE chats are replayed at once; each page of a chat's events is sent in SQS batches
 * (core/sqs-batches.ts) before its next page is read. Answers how many events were enqueued.
 */
export async function replayMessageEvents(deps: ReplayDeps, webhook: WebhookRegistration, range: ReplayRange): Promise<number> {
  const pageSize = deps.pageSize ?? DEFAULT_PAGE_SIZE;
  const only = range.accountId ?? webhook.accountId;
  const accounts = only !== undefined ? single(only) : allAccountIds(deps.table, pageSize);
  let queued = 0;
  for await (const accountId of accounts) {
    if (!webhookSelects(webhook, accountId, 'message')) continue;
    queued += await replayAccount(deps, webhook.webhookId, accountId, range, pageSize);
  }
  return queued;
}

async function replayAccount(
  deps: ReplayDeps,
  webhookId: string,
  accountId: string,
  range: ReplayRange,
  pageSize: number,
): Promise<number> {
  const replayedChats = new Set<string>();
  const bounds = messagesGsi1Range(range.since, range.until);
  let queued = 0;
  const replayChat = async (chatId: string) => {
    for await (const items of gsi1RangePages(deps.table, messagesGsi1pk(accountId, chatId), bounds, pageSize, { skipExpired: true })) {
      const events = items
        .map((item) => messageSchema.parse(item))
        .filter((message) => !message.fromMe || deps.includeFromMe)
        .map((message) => ({ ...messageEventFor(accountId, message), webhookId }));
      await Promise.all(events.map((event) => deps.queues.sendWebhookEvent(event)));
      queued += events.length;
    }
  };
  for await (const chats of gsi1RangePages(deps.table, chatsGsi1pk(accountId), { from: chatsGsi1From(range.since) }, pageSize, {
    skipExpired: true,
  })) {
    const chatIds = chats.map((chat) => String(chat.chatId)).filter((chatId) => !replayedChats.has(chatId));
    for (const chatId of chatIds) replayedChats.add(chatId);
    await eachWithConcurrency(chatIds, CHATS_AT_ONCE, replayChat);
  }
  return queued;
}

/** Runs `work` on every item, at most `limit` at a time; rejects with the first failure once all have settled. */
async function eachWithConcurrency<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}

async function* single(accountId: string): AsyncGenerator<string> {
  yield accountId;
}

async function* allAccountIds(table: Table, pageSize: number): AsyncGenerator<string> {
  for await (const accounts of gsi1RangePages(table, ACCOUNTS_GSI1PK, {}, pageSize)) {
    for (const account of accounts) yield String(account._id);
  }
}
