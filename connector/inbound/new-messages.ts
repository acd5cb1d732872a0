import type { WAMessage } from '@whiskeysockets/baileys';
import type { LazyLog } from '../../core/lazy-child.js';
import type { MediaStore } from '../../core/media-store.js';
import { messageEventFor } from '../../core/message-event.js';
import type { Message } from '../../core/schemas/message.js';
import type { ChatWriter, HoldChat } from '../../core/store/chat-writer.js';
import type { ChatChange } from '../../core/store/chats.js';
import { clearEventPending, findMessageRecord, type MessageMarks } from '../../core/store/messages.js';
import type { Table } from '../../core/store/table.js';
import type { EventPublisher } from './event-publisher.js';
import type { MediaDescriptor } from './map-message.js';
import type { InboundContext, UpsertedMessage } from './pipeline.js';
import type { SentStatus } from './sent-status.js';
import { attachMessageMedia } from './store-media.js';

/**
 * New messages: the row written only if absent, with its chat's change, then the webhook event,
 * held until enqueued by the write-ahead record or the row's `eventPending` mark
 * (docs/guarantees.md); a redelivered message's event goes out if it may never have.
 */

type StoredMessage = { message: Message; marks: MessageMarks };

/** A new message from someone else, without media, in a run written together (storeNewRun). */
export interface NewInRun {
  index: number;
  msg: WAMessage;
  message: Message;
  type: UpsertedMessage['type'];
  log: LazyLog;
}

export interface NewMessagesDeps {
  table: Table;
  mediaStore: MediaStore;
  events: EventPublisher;
  chats: ChatWriter;
  /** Writes the rows of messages the account sent, with their status. */
  sentStatus: Pick<SentStatus, 'putSentMessage' | 'sendStatusEvents'>;
  /** Also deliver messages the account sent itself to webhooks. */
  deliverFromMe: boolean;
  /** A media download and store that takes longer is abandoned (message kept). */
  mediaTimeoutMs: number;
}

export function newMessagesOf({ table, mediaStore, events, chats, sentStatus, deliverFromMe, mediaTimeoutMs }: NewMessagesDeps) {
  /**
   * Publishes the message's webhook event, then removes the row's marks when `clearMarks`. A live
   * message's write-ahead record holds the event until it is handed off (served, or its retry
   * queued): the handling goes on without waiting for the webhook (`ctx.heldUntil`).
   */
  async function deliverEvent(accountId: string, message: Message, clearMarks: boolean, ctx: InboundContext) {
    const handOff = events.publish(messageEventFor(accountId, message));
    if (!clearMarks && ctx.heldUntil && ctx.writeAhead?.(message.messageId) === 'live') {
      ctx.heldUntil(message.messageId, handOff);
      return;
    }
    await handOff;
    if (clearMarks) await clearEventPending(table, accountId, message.messageId);
  }

  /**
   * A live message's write-ahead record holds its chat's write (inbox.ts `holdUntil`): the record
   * is deleted only once the chat is stored, and replayed after a crash before that, so the
   * chat's put may wait for company (chat-writer.ts) while the event goes out.
   */
  function chatHeldBy(message: Message, ctx: InboundContext): HoldChat | undefined {
    const { heldUntil } = ctx;
    if (!heldUntil || ctx.writeAhead?.(message.messageId) !== 'live') return undefined;
    return (chatWritten) => heldUntil(message.messageId, chatWritten);
  }

  /**
   * A message that is stored already: its event goes out now if it may never have (the row's
   * mark, or a write-ahead record there for a row whose record held the event: the record goes
   * only after the enqueue, so at worst the event goes twice, same id). Its marks go then, so a
   * later redelivery sends nothing.
   */
  async function handleRedelivery(accountId: string, stored: StoredMessage | undefined, ctx: InboundContext, log: LazyLog) {
    const marks = stored?.marks ?? {};
    if (stored && (marks.eventPending || (marks.eventHeldByRecord && ctx.writeAhead?.(stored.message.messageId)))) {
      await deliverEvent(accountId, stored.message, true, ctx);
      log.info('stored message redelivered with its webhook event possibly pending: event enqueued');
      return;
    }
    log.debug('message already stored');
  }

  /**
   * Writes a new message's row unless stored, and its chat's change; one the account sent with
   * its status (sent-status.ts). Answers the moves made.
   */
  async function putNewMessage(
    accountId: string,
    msg: WAMessage,
    message: Message,
    marks: MessageMarks,
    chat: ChatChange,
    ctx: InboundContext,
  ) {
    if (!message.fromMe)
      return { stored: await chats.putMessageIfAbsent(accountId, message, marks, chat, chatHeldBy(message, ctx)), moves: [] };
    return sentStatus.putSentMessage(accountId, msg, message, marks, chat);
  }

  async function storeNewMessage(
    accountId: string,
    msg: WAMessage,
    mapped: Message,
    media: MediaDescriptor | undefined,
    upsertType: UpsertedMessage['type'],
    ctx: InboundContext,
    log: LazyLog,
  ) {
    const message: Message = { ...mapped };
    if (media) {
      const existing = await findMessageRecord(table, accountId, mapped.messageId);
      if (existing) {
        await handleRedelivery(accountId, existing, ctx, log);
        return;
      }
      await attachMessageMedia({ table, mediaStore }, accountId, message, media, () => ctx.download(msg), mediaTimeoutMs, log);
    }
    const unread = upsertType === 'notify' && !message.fromMe;
    const eventDue = !message.fromMe || deliverFromMe;
    // A replay writes the mark: its row outlives the record, and a redelivery by WhatsApp
    // (not receipted before the crash) then finds the mark gone, not a record of its own.
    const marks: MessageMarks = !eventDue
      ? {}
      : ctx.writeAhead?.(message.messageId) === 'live'
        ? { eventHeldByRecord: true }
        : { eventPending: true };
    const chat = await chatChangeOf(msg, message, unread, ctx);
    const { stored, moves } = await putNewMessage(accountId, msg, message, marks, chat, ctx);
    if (!stored) {
      await handleRedelivery(accountId, await findMessageRecord(table, accountId, message.messageId), ctx, log);
      await sentStatus.sendStatusEvents(accountId, message.messageId, message.chatId, moves);
      return;
    }
    if (eventDue) await deliverEvent(accountId, message, marks.eventPending === true, ctx);
    await sentStatus.sendStatusEvents(accountId, message.messageId, message.chatId, moves);
    log.debug({ type: message.type, fromMe: message.fromMe }, 'inbound message stored');
  }

  /** The name a message gives its chat, if any. */
  async function chatNameFrom(msg: WAMessage, message: Message, ctx: InboundContext): Promise<string | undefined> {
    // A pushName names the sender: it names the chat only in a one-to-one chat, not for our own
    // messages; a group chat is named by the group's subject.
    if (message.participant !== undefined) return ctx.groupSubject?.(message.chatId);
    // The name saved in the address book wins over the push name (contact-book.ts renames the chat when either changes).
    const saved = ctx.savedNameOf?.(message.chatId);
    if (saved) return saved;
    return !message.fromMe && message.from === message.chatId && msg.pushName ? msg.pushName : undefined;
  }

  /** What a message does to its chat: moves it to the message's time, one more unread, maybe a name. */
  async function chatChangeOf(msg: WAMessage, message: Message, unread: boolean, ctx: InboundContext): Promise<ChatChange> {
    const name = await chatNameFrom(msg, message, ctx);
    return { at: message.timestamp, unread: unread ? 1 : 0, ...(name ? { name } : {}) };
  }

  /**
   * New messages from others without media, that followed each other in the account's upserts:
   * stored as `storeNewMessage` stores one, their rows and chats in shared requests
   * (chat-writer.ts). Their events are then enqueued together, in order. `failed[i]` is set for
   * the run's messages whose handling failed (logged here).
   */
  async function storeNewRun(
    accountId: string,
    run: readonly NewInRun[],
    ctx: InboundContext,
    failed: (entry: NewInRun, error: unknown) => void,
  ) {
    // Named in order before any row goes: the last name a run gives a chat is the one it keeps.
    const changes = await Promise.allSettled(run.map((entry) => chatChangeOf(entry.msg, entry.message, entry.type === 'notify', ctx)));
    const outcomes = await Promise.all(
      run.map(async (item, i) => {
        // Messages of others: the event is due; who holds it as in storeNewMessage.
        const marks: MessageMarks =
          ctx.writeAhead?.(item.message.messageId) === 'live' ? { eventHeldByRecord: true } : { eventPending: true };
        const entry = { ...item, marks };
        const change = changes[i]!;
        if (change.status === 'rejected') return { entry, error: change.reason as unknown };
        try {
          return {
            entry,
            stored: await chats.putMessageIfAbsent(accountId, entry.message, marks, change.value, chatHeldBy(entry.message, ctx)),
          };
        } catch (error) {
          return { entry, error };
        }
      }),
    );
    const events: Promise<void>[] = [];
    const redelivered: Array<(typeof outcomes)[number]['entry']> = [];
    for (const outcome of outcomes) {
      const { entry } = outcome;
      if ('error' in outcome) {
        failed(entry, outcome.error);
        continue;
      }
      if (outcome.stored) {
        events.push(
          deliverEvent(accountId, entry.message, entry.marks.eventPending === true, ctx).then(
            () => entry.log.debug({ type: entry.message.type, fromMe: false }, 'inbound message stored'),
            (error: unknown) => failed(entry, error),
          ),
        );
        continue;
      }
      redelivered.push(entry);
    }
    await Promise.all(events);
    // After the events of the run. A message twice in one run is a plain duplicate: its first
    // copy's event was just enqueued (its write-ahead record is still held, so handling it as a
    // redelivery would enqueue the event again).
    const storedNow = new Set(
      outcomes.flatMap((outcome) => ('stored' in outcome && outcome.stored ? [outcome.entry.message.messageId] : [])),
    );
    for (const entry of redelivered) {
      try {
        if (storedNow.has(entry.message.messageId)) entry.log.debug('message twice in one batch: stored once');
        else await handleRedelivery(accountId, await findMessageRecord(table, accountId, entry.message.messageId), ctx, entry.log);
      } catch (error) {
        failed(entry, error);
      }
    }
  }

  return { storeNewMessage, storeNewRun };
}
