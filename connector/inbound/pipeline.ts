/**
 * The inbound pipeline: what the connector does with every message Baileys hands over.
 *
 *   const inbound = createInboundPipeline({ config, clients, logger });
 *   await inbound.handleUpsert(accountId, { messages, type }, { selfJid, download });
 *
 * Per message, in order (a message is handled before a later reaction to it):
 * 1. map it (map-message.ts); status broadcasts and protocol-only messages are skipped;
 * 2. reactions, revokes and edits update the stored target message (reactions list, revoked
 *    flag, new text or caption);
 * 3. a new message: its row is written only if absent, and with it the Chat (name, unreadCount
 *    for inbound `notify`, lastMessageTime; core/store/chat-writer.ts). When the row was there
 *    already (a redelivery), the unread count is left as it was (lastMessageTime only moves
 *    forward, to this same time). Media is downloaded once into S3 with a Media item before the
 *    row (a message with media is looked up first, so a redelivery does not download it again);
 * 4. the webhook event is due for inbound messages (fromMe false; WEBHOOK_INCLUDE_FROM_ME=true
 *    or `deliverFromMe: true` adds the account's own), with eventId `<accountId>:<messageId>`.
 *    Something durable holds the event until it is enqueued (docs/guarantees.md): for a live
 *    message, the write-ahead record this process wrote while decrypting it (`ctx.writeAhead`
 *    says 'live': the row then carries `eventHeldByRecord`, and no write follows the enqueue);
 *    otherwise (a replay, no record) an `eventPending` mark on the row, removed after the
 *    enqueue. A redelivery or replay of a stored message whose event may be pending (the mark
 *    is still there, or the row says its record holds it and a record of it is there) enqueues
 *    the event then and removes both marks: a stored message always reaches the queue.
 * A media download failure keeps the row (hasMedia true, no mediaId, `mediaError` says why) and
 * logs a warning.
 * Any other failure is logged here, once per message, and the first one thrown to the caller
 * (which releases the message for a replay) after the remaining messages of the batch are handled.
 */
import { BoundedCache } from '../../core/bounded-cache.js';
import type { Readable } from 'node:stream';
import type { BaileysEventMap, WAMessage } from '@whiskeysockets/baileys';
import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { lazyChild, type LazyLog } from '../../core/lazy-child.js';
import { mediaStoreOf } from '../../core/media-store.js';
import { createQueues, type Queues } from '../../core/queues.js';
import type { Message } from '../../core/schemas/message.js';
import type { ChatChange } from '../../core/store/chats.js';
import {
  addGroupReceipt,
  advanceMessageStatus,
  clearEventPending,
  editMessageContent,
  findMessageRecord,
  markMessageRevoked,
  setPollVotes,
  setReactions,
  type MessageMarks,
} from '../../core/store/messages.js';
import { forwardMoves, isForwardMove, statusEventFor, type StatusMove } from '../../core/message-status.js';
import { KeyedSerial } from '../../core/serial.js';
import type { WebhookEvent } from '../../core/schemas/webhook-event.js';
import { tableOf } from '../../core/store/table.js';
import { chatWriterOf } from '../../core/store/chat-writer.js';
import type { InboundAction, MediaDescriptor, PollVote, UpdateOrigin } from './map-message.js';
import { EarlyStatuses, statusFromBaileys } from './status.js';
import { InterruptedSends, type InterruptedSendSettler } from '../commands/interrupted-sends.js';
import { groupStatusOf, type GroupReceipt, type GroupRecipients } from './group-receipts.js';
import { decryptVote, pollVoteEvent, withVote } from './poll-votes.js';
import { findPollSecret, putPollSecret } from '../../core/store/poll-secrets.js';
import { applyReaction } from './reactions.js';
import { storeMessageMedia } from './store-media.js';
import { messageEventFor } from '../../core/message-event.js';

export interface InboundPipelineDeps {
  config: Config;
  clients: AwsClients;
  logger: Logger;
  /** Defaults to the queues of `config`. */
  queues?: Queues;
  /** Also deliver messages the account sent itself to webhooks. Default: WEBHOOK_INCLUDE_FROM_ME. */
  deliverFromMe?: boolean;
  /** A media download and store that takes longer is abandoned (message kept). Default 5 min. */
  mediaTimeoutMs?: number;
}

/** What the pipeline gets with every batch of messages of one account, from its session. */
export interface InboundContext {
  /** The account's own JID (normalized, no device suffix): `from` of messages it sent. */
  selfJid: string;
  /** Decrypted media bytes of a message (sandbox CA trusted when in sandbox mode). */
  download(message: WAMessage): Promise<Readable>;
  /** A group's subject, which names its chat (undefined when unknown). */
  groupSubject?(groupJid: string): Promise<string | undefined>;
  /**
   * Whether a write-ahead record of the message is stored and deleted only after this handling:
   * 'live' when this process wrote it while decrypting the message, 'replay' when the handling
   * replays records left behind; undefined when there is none (the account's own sends, a
   * message too large to record).
   */
  writeAhead?(messageId: string): WriteAhead | undefined;
}

type MessagesUpsert = BaileysEventMap['messages.upsert'];

/** A receipt (or WhatsApp's ack) for a message the account sent. */
export interface StatusUpdate extends StatusMove {
  messageId: string;
}

/** A message of a `messages.upsert` event, with the event's type. */
export interface UpsertedMessage {
  message: WAMessage;
  type: MessagesUpsert['type'];
}

/** Also settles interrupted sends (commands/interrupted-sends.ts): their evidence is a receipt. */
export interface InboundPipeline extends InterruptedSendSettler {
  handleUpsert(accountId: string, upsert: MessagesUpsert, ctx: InboundContext): Promise<void>;
  /**
   * Messages of consecutive upserts of one account, in order: the same handling as one
   * `handleUpsert` each, with new messages that follow each other written together (their rows
   * in shared requests, one chat update per chat). Answers, per message, whether it was handled
   * (a failure is logged here; the caller releases that message for a replay).
   */
  handleMessages(accountId: string, messages: readonly UpsertedMessage[], ctx: InboundContext): Promise<boolean[]>;
  /** Moves sent messages forward (never backwards) and enqueues a `message.status` event per move. */
  handleStatus(accountId: string, updates: readonly StatusUpdate[]): Promise<void>;
  /**
   * Group members' receipts of messages the account sent to `groupJid`: the message moves to
   * delivered / read once every member said so (`recipients`: the members besides the account).
   */
  handleGroupReceipts(
    accountId: string,
    groupJid: string,
    receipts: readonly GroupReceipt[],
    recipients: () => Promise<GroupRecipients | undefined>,
  ): Promise<void>;
}

type StoredMessage = { message: Message; marks: MessageMarks };

/** A new message from someone else, without media, in a run written together (storeNewRun). */
interface NewInRun {
  index: number;
  msg: WAMessage;
  message: Message;
  type: MessagesUpsert['type'];
  log: MessageLog;
}

type WriteAhead = 'live' | 'replay';

const DEFAULT_MEDIA_TIMEOUT_MS = 5 * 60_000;

/** Sent group messages whose members' receipts may wait for the row, at most (each kept two minutes). */
const EARLY_GROUP_RECEIPTS_LIMIT = 10_000;

interface EarlyGroupReceipts {
  groupJid: string;
  receipts: GroupReceipt[];
  recipients: () => Promise<GroupRecipients | undefined>;
}

/** The key of one message's status lock, early receipts and interrupted send. */
const statusKey = (accountId: string, messageId: string) => `${accountId}\n${messageId}`;

export function createInboundPipeline(deps: InboundPipelineDeps): InboundPipeline {
  const table = tableOf(deps.config, deps.clients);
  const mediaStore = mediaStoreOf(deps.config, deps.clients);
  const queues = deps.queues ?? createQueues(deps.config, deps.clients, deps.logger);
  const chats = chatWriterOf(table);
  let mapper: typeof import('./map-message.js') | undefined;
  /** A message's status write and the write of its row exclude each other (early receipts). */
  const statusLocks = new KeyedSerial();
  const earlyStatuses = new EarlyStatuses();
  const interruptedSends = new InterruptedSends(table, earlyStatuses);
  /** Group receipts for messages the account sent whose row is still to come (a phone member acks at once). */
  const earlyGroupReceipts = new BoundedCache<string, EarlyGroupReceipts>('early-group-receipts', EARLY_GROUP_RECEIPTS_LIMIT, 2 * 60_000);
  const deliverFromMe = deps.deliverFromMe ?? deps.config.WEBHOOK_INCLUDE_FROM_ME;
  /** Events of what the account did itself go out only when its own messages do. */
  const updateEventDue = (origin: UpdateOrigin) => !origin.fromMe || deliverFromMe;

  /** What the message is; map-message loads Baileys, which an empty connector does not need, so it comes with the first message. */
  async function mapOne(msg: WAMessage, ctx: InboundContext): Promise<InboundAction> {
    mapper ??= await import('./map-message.js');
    return mapper.mapInboundMessage(msg, ctx.selfJid);
  }

  async function handleOne(
    accountId: string,
    msg: WAMessage,
    upsertType: MessagesUpsert['type'],
    ctx: InboundContext,
    action: InboundAction,
  ) {
    const log = lazyChild(deps.logger, () => ({ accountId, messageId: msg.key.id }));
    switch (action.kind) {
      case 'skip':
        log.debug({ reason: action.reason }, 'inbound message skipped');
        return;
      case 'reaction': {
        const target = await updateTarget(accountId, action, log);
        if (!target) return;
        const { messageId, reactions } = target.message;
        if (!(await setReactions(table, accountId, messageId, applyReaction(reactions, action.reaction)))) return;
        if (updateEventDue(action)) {
          const { from, emoji, timestamp } = action.reaction;
          await sendUpdateEvent(accountId, action, 'message.reaction', 'reaction', {
            messageId,
            chatId: action.chatId,
            from,
            emoji,
            timestamp,
          });
        }
        return;
      }
      case 'revoke': {
        const target = await updateTarget(accountId, action, log);
        if (!target || !(await markMessageRevoked(table, accountId, target.message.messageId))) return;
        if (updateEventDue(action))
          await sendUpdateEvent(accountId, action, 'message.revoked', 'revoked', baseUpdateBody(target.message, action));
        return;
      }
      case 'edit': {
        const target = await updateTarget(accountId, action, log);
        if (!target || target.message.revoked) return;
        const { message } = target;
        const text = action.text !== undefined && message.text !== undefined ? action.text : undefined;
        const caption = action.caption !== undefined && message.hasMedia ? action.caption : undefined;
        if (text === undefined && caption === undefined) return;
        const content = { ...(text !== undefined ? { text } : {}), ...(caption !== undefined ? { caption } : {}) };
        if (!(await editMessageContent(table, accountId, message.messageId, content))) return;
        if (updateEventDue(action)) {
          await sendUpdateEvent(accountId, action, 'message.edited', 'edited', {
            ...baseUpdateBody(message, action),
            text: text ?? caption,
          });
        }
        return;
      }
      case 'message':
        await storeNewMessage(accountId, msg, action.message, action.media, upsertType, ctx, log);
        if (action.pollSecret) await putPollSecret(table, accountId, action.message.messageId, action.pollSecret);
        return;
      case 'poll_vote':
        await storePollVote(accountId, msg.key.id ?? '', action, ctx, log);
        return;
    }
  }

  /**
   * The stored message an update points at, when it is in the chat the update came from: an
   * update naming a message id of another chat changes nothing. Its marks come along so that
   * rewriting the row keeps them.
   */
  async function updateTarget(accountId: string, update: { kind: string; chatId: string; targetMessageId: string }, log: MessageLog) {
    const target = await findMessageRecord(table, accountId, update.targetMessageId);
    if (!target || target.message.chatId !== update.chatId) {
      log.debug(
        { targetMessageId: update.targetMessageId, update: update.kind, stored: Boolean(target) },
        'update of a message not stored in this chat',
      );
      return undefined;
    }
    return target;
  }

  /**
   * The event of a reaction, revoke or edit: its eventId is that of the update message (a
   * revoke: of its target, which is revoked once), stable across redeliveries.
   */
  async function sendUpdateEvent(
    accountId: string,
    origin: UpdateOrigin,
    event: 'message.reaction' | 'message.revoked' | 'message.edited',
    suffix: string,
    body: Record<string, unknown>,
  ) {
    const id = event === 'message.revoked' ? String(body.messageId) : origin.updateId;
    const queued: WebhookEvent = { eventId: `${accountId}:${id}:${suffix}`, accountId, event, body, createdAt: Date.now() };
    await queues.sendWebhookEvent(queued);
  }

  function baseUpdateBody(target: Message, origin: UpdateOrigin) {
    return { messageId: target.messageId, chatId: origin.chatId, from: origin.from, timestamp: origin.timestamp };
  }

  /** Enqueues the `message.status` events of moves already written. */
  async function sendStatusEvents(accountId: string, messageId: string, chatId: string, moves: readonly StatusMove[]) {
    for (const move of moves) {
      if (move.status !== 'pending') await queues.sendWebhookEvent(statusEventFor(accountId, messageId, chatId, move));
    }
  }

  /**
   * One receipt: a single conditional write moves the message forward, then its event goes out.
   * A message not stored yet keeps the receipt for the write of its row.
   */
  async function applyStatus(accountId: string, update: StatusUpdate) {
    const key = statusKey(accountId, update.messageId);
    const chatId = await statusLocks.run(key, async () => {
      const moved = await advanceMessageStatus(table, accountId, update.messageId, update.status, update.at);
      const move = { status: update.status, at: update.at };
      // Not moved: a duplicate, a late (backward) receipt, or a row still to come (or never: a
      // send whose connector stopped before storing it).
      if (moved === undefined) earlyStatuses.remember(key, move);
      // A send left `unknown` by a connector that stopped mid-send is settled by its receipt.
      if (await interruptedSends.receipt(key, accountId, update.messageId, move)) {
        deps.logger.info(
          { accountId, messageId: update.messageId, status: update.status },
          'interrupted send settled as sent by its receipt',
        );
      }
      return moved;
    });
    if (chatId !== undefined) await sendStatusEvents(accountId, update.messageId, chatId, [update]);
  }

  /**
   * Writes a new message's row unless stored, and its chat's change. A message the account sent
   * gets its status: the one it came with, moved on by receipts that came before the row.
   * Answers the moves made.
   */
  async function putNewMessage(accountId: string, msg: WAMessage, message: Message, marks: MessageMarks, chat: ChatChange) {
    if (!message.fromMe) return { stored: await chats.putMessageIfAbsent(accountId, message, marks, chat), moves: [] };
    const key = statusKey(accountId, message.messageId);
    let early: EarlyGroupReceipts | undefined;
    const result = await statusLocks.run(key, async () => {
      early = earlyGroupReceipts.get(key);
      earlyGroupReceipts.delete(key);
      const now = Date.now();
      const initial: StatusMove = { status: statusFromBaileys(msg.status) ?? 'sent', at: now };
      const moves = forwardMoves(undefined, [initial, ...earlyStatuses.take(key, now)]);
      const last = moves[moves.length - 1] ?? initial;
      const withStatus: Message = { ...message, status: last.status, statusAt: last.at };
      if (await chats.putMessageIfAbsent(accountId, withStatus, marks, chat)) return { stored: true, moves };
      // Stored already (a redelivery): what it brings is applied like receipts.
      const applied: StatusMove[] = [];
      for (const move of moves) {
        if (await advanceMessageStatus(table, accountId, message.messageId, move.status, move.at)) applied.push(move);
      }
      return { stored: false, moves: applied };
    });
    if (early) await applyGroupReceipts(accountId, early.groupJid, early.receipts, early.recipients);
    return result;
  }

  /** Records one member's receipt on the sent message; a message not stored yet keeps it for the write of its row. */
  function recordGroupReceipt(
    accountId: string,
    groupJid: string,
    receipt: GroupReceipt,
    recipients: () => Promise<GroupRecipients | undefined>,
  ) {
    const key = statusKey(accountId, receipt.messageId);
    return statusLocks.run(key, async () => {
      const sets = await addGroupReceipt(table, accountId, receipt.messageId, receipt.kind, receipt.userJid);
      if (!sets) {
        const kept = earlyGroupReceipts.get(key);
        earlyGroupReceipts.set(key, { groupJid, receipts: [...(kept?.receipts ?? []), receipt], recipients });
      }
      return sets;
    });
  }

  async function applyGroupReceipts(
    accountId: string,
    groupJid: string,
    receipts: readonly GroupReceipt[],
    recipients: () => Promise<GroupRecipients | undefined>,
  ) {
    let members: GroupRecipients | undefined;
    for (const receipt of receipts) {
      const sets = await recordGroupReceipt(accountId, groupJid, receipt, recipients);
      if (!sets) continue;
      members ??= await recipients();
      if (!members) {
        deps.logger.debug({ accountId, groupJid }, 'group members unknown: group receipts recorded, status not decided');
        return;
      }
      const status = groupStatusOf(members, sets.deliveredTo, sets.readBy);
      if (status && isForwardMove(sets.status, status))
        await applyStatus(accountId, { messageId: receipt.messageId, status, at: receipt.at });
    }
  }

  /** Decrypts a vote with its poll's secret, keeps it on the poll, and queues `message.poll_vote` when it is due. */
  async function storePollVote(accountId: string, voteMessageId: string, vote: PollVote, ctx: InboundContext, log: MessageLog) {
    const poll = await updateTarget(accountId, { kind: 'poll_vote', chatId: vote.chatId, targetMessageId: vote.pollMessageId }, log);
    const secret = poll ? await findPollSecret(table, accountId, vote.pollMessageId) : undefined;
    if (!poll || !secret) {
      log.debug({ pollMessageId: vote.pollMessageId }, 'vote for a poll whose secret is not stored');
      return;
    }
    const selected = decryptVote(vote, poll.message, secret, ctx.selfJid);
    if (!selected) {
      log.warn({ pollMessageId: vote.pollMessageId }, 'poll vote could not be decrypted');
      return;
    }
    const updated = withVote(poll.message, vote.from, selected, vote.timestamp);
    await setPollVotes(table, accountId, poll.message.messageId, updated.pollVotes);
    // The account's own vote is posted only with WEBHOOK_INCLUDE_FROM_ME, as its reactions and edits are.
    if (!vote.fromMe || deliverFromMe) await queues.sendWebhookEvent(pollVoteEvent(accountId, voteMessageId, vote, selected));
  }

  /** Enqueues the message's webhook event, then removes the row's marks when `clearMarks`. */
  async function deliverEvent(accountId: string, message: Message, clearMarks: boolean) {
    await queues.sendWebhookEvent(messageEventFor(accountId, message));
    if (clearMarks) await clearEventPending(table, accountId, message.messageId);
  }

  /**
   * A message that is stored already: its event goes out now if it may never have (the row's
   * mark, or a write-ahead record there for a row whose record held the event: the record goes
   * only after the enqueue, so at worst the event goes twice, same id). Its marks go then, so a
   * later redelivery sends nothing.
   */
  async function settleRedelivery(accountId: string, stored: StoredMessage | undefined, ctx: InboundContext, log: MessageLog) {
    const marks = stored?.marks ?? {};
    if (stored && (marks.eventPending || (marks.eventHeldByRecord && ctx.writeAhead?.(stored.message.messageId)))) {
      await deliverEvent(accountId, stored.message, true);
      log.info('stored message redelivered with its webhook event possibly pending: event enqueued');
      return;
    }
    log.debug('message already stored');
  }

  async function storeNewMessage(
    accountId: string,
    msg: WAMessage,
    mapped: Message,
    media: MediaDescriptor | undefined,
    upsertType: MessagesUpsert['type'],
    ctx: InboundContext,
    log: MessageLog,
  ) {
    const message: Message = { ...mapped };
    if (media) {
      const existing = await findMessageRecord(table, accountId, mapped.messageId);
      if (existing) {
        await settleRedelivery(accountId, existing, ctx, log);
        return;
      }
      const signal = AbortSignal.timeout(deps.mediaTimeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS);
      try {
        const body = await abortable(ctx.download(msg), signal);
        const stored = await storeMessageMedia({ table, mediaStore }, accountId, message.messageId, media, body, signal);
        message.mediaId = stored.mediaId;
        message.fileLength ??= stored.size;
      } catch (error) {
        // The message itself must not be lost: it is kept with hasMedia, no mediaId and a note.
        message.mediaError = signal.aborted ? 'media download timed out' : 'media could not be downloaded';
        log.warn({ err: error, type: message.type }, 'media download failed; message stored without media');
      }
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
    const { stored, moves } = await putNewMessage(accountId, msg, message, marks, chat);
    if (!stored) {
      await settleRedelivery(accountId, await findMessageRecord(table, accountId, message.messageId), ctx, log);
      await sendStatusEvents(accountId, message.messageId, message.chatId, moves);
      return;
    }
    if (eventDue) await deliverEvent(accountId, message, marks.eventPending === true);
    await sendStatusEvents(accountId, message.messageId, message.chatId, moves);
    log.debug({ type: message.type, fromMe: message.fromMe }, 'inbound message stored');
  }

  /** The name a message gives its chat, if any. */
  async function chatNameFrom(msg: WAMessage, message: Message, ctx: InboundContext): Promise<string | undefined> {
    // A pushName names the sender: it names the chat only in a one-to-one chat, not for our own
    // messages; a group chat is named by the group's subject.
    if (message.participant !== undefined) return ctx.groupSubject?.(message.chatId);
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
          return { entry, stored: await chats.putMessageIfAbsent(accountId, entry.message, marks, change.value) };
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
          deliverEvent(accountId, entry.message, entry.marks.eventPending === true).then(
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
    // copy's event was just enqueued (its write-ahead record is still held, so settling it as a
    // redelivery would enqueue the event again).
    const storedNow = new Set(
      outcomes.flatMap((outcome) => ('stored' in outcome && outcome.stored ? [outcome.entry.message.messageId] : [])),
    );
    for (const entry of redelivered) {
      try {
        if (storedNow.has(entry.message.messageId)) entry.log.debug('message twice in one batch: stored once');
        else await settleRedelivery(accountId, await findMessageRecord(table, accountId, entry.message.messageId), ctx, entry.log);
      } catch (error) {
        failed(entry, error);
      }
    }
  }

  /** Handles messages in order; a failure is logged, and the answer says which failed (by index). */
  async function handleInOrder(
    accountId: string,
    messages: readonly UpsertedMessage[],
    ctx: InboundContext,
  ): Promise<Map<number, unknown>> {
    const failures = new Map<number, unknown>();
    const fail = (index: number, messageId: string | null | undefined, error: unknown) => {
      failures.set(index, error);
      deps.logger.error({ accountId, messageId, err: error }, 'inbound message failed');
    };
    let run: NewInRun[] = [];
    const storeRun = async () => {
      if (run.length === 0) return;
      const taken = run;
      run = [];
      await storeNewRun(accountId, taken, ctx, (entry, error) => fail(entry.index, entry.message.messageId, error));
    };
    for (const [index, { message: msg, type }] of messages.entries()) {
      try {
        const action = await mapOne(msg, ctx);
        if (action.kind === 'message' && !action.media && !action.pollSecret && !action.message.fromMe) {
          const log = lazyChild(deps.logger, () => ({ accountId, messageId: msg.key.id }));
          run.push({ index, msg, message: action.message, type, log });
          continue;
        }
        // Anything else is handled on its own, after the messages before it are stored.
        await storeRun();
        await handleOne(accountId, msg, type, ctx, action);
      } catch (error) {
        fail(index, msg.key.id, error);
      }
    }
    await storeRun();
    return failures;
  }

  return {
    async handleUpsert(accountId, upsert, ctx) {
      const failures = await handleInOrder(
        accountId,
        upsert.messages.map((message) => ({ message, type: upsert.type })),
        ctx,
      );
      const [first] = [...failures.keys()].sort((a, b) => a - b);
      if (first !== undefined) throw failures.get(first);
    },
    async handleMessages(accountId, messages, ctx) {
      const failures = await handleInOrder(accountId, messages, ctx);
      return messages.map((_, index) => !failures.has(index));
    },
    async handleStatus(accountId, updates) {
      let firstError: unknown;
      for (const update of updates) {
        try {
          await applyStatus(accountId, update);
        } catch (error) {
          firstError ??= error;
          deps.logger.error({ accountId, messageId: update.messageId, status: update.status, err: error }, 'message status update failed');
        }
      }
      if (firstError) throw firstError;
    },
    handleGroupReceipts: applyGroupReceipts,
    settleInterruptedSend(accountId, messageId, reason) {
      const key = statusKey(accountId, messageId);
      return statusLocks.run(key, () => interruptedSends.settle(key, accountId, messageId, reason));
    },
  };
}

/** Rejects with the signal's reason when it aborts first; a late stream is destroyed. */
function abortable(download: Promise<Readable>, signal: AbortSignal): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    download.then(
      (stream) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) stream.destroy();
        else resolve(stream);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** What the handling of one message logs with. */
type MessageLog = LazyLog;
