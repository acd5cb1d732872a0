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
 *
 * This file wires the parts: ordering.ts (an account's messages in order, new ones in runs),
 * new-messages.ts (rows, chats, events; media through store-media.ts), message-updates.ts
 * (reactions, revokes, edits, poll votes) and sent-status.ts (receipts of sent messages, and
 * the resolving of interrupted sends that rests on them).
 */
import type { Readable } from 'node:stream';
import type { BaileysEventMap, WAMessage } from '@whiskeysockets/baileys';
import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import { isGroupJid } from '../../core/jid.js';
import { lazyChild } from '../../core/lazy-child.js';
import type { Logger } from '../../core/logger.js';
import { mediaStoreOf } from '../../core/media-store.js';
import type { StatusMove } from '../../core/message-status.js';
import { createQueues, type Queues } from '../../core/queues.js';
import { chatWriterOf } from '../../core/store/chat-writer.js';
import { putPollSecret } from '../../core/store/poll-secrets.js';
import { tableOf } from '../../core/store/table.js';
import type { InterruptedSendResolver } from '../commands/interrupted-sends.js';
import type { GroupReceipt, GroupRecipients } from './group-receipts.js';
import type { InboundAction } from './map-message.js';
import { messageUpdatesOf } from './message-updates.js';
import { EventOutbox, outboxEvents } from './event-outbox.js';
import { queuedPublisher, type EventPublisher } from './event-publisher.js';
import { newMessagesOf } from './new-messages.js';
import { inOrderHandler } from './ordering.js';
import { sentStatusOf } from './sent-status.js';

export interface InboundPipelineDeps {
  config: Config;
  clients: AwsClients;
  logger: Logger;
  /** Defaults to the queues of `config`. */
  queues?: Queues;
  /**
   * Where stored events go (straight delivery in the connector); default: the webhook queue, for
   * a delivery worker elsewhere.
   */
  events?: EventPublisher;
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
  /**
   * For a message whose write-ahead record is 'live': its event is handed off when `handOff`
   * resolves, and the record holds it until then (inbox.ts `holdUntil`), so the handling need
   * not wait for the webhook. Absent: the handling awaits the hand-off before the hold goes.
   */
  heldUntil?(messageId: string, handOff: Promise<void>): void;
  /** The account's `ignoreGroups` setting now: group messages are then neither stored nor posted. */
  ignoreGroups?(): boolean;
  /** The name saved in the phone's address book for a person, when the session knows it: it names their chat. */
  savedNameOf?(jid: string): string | undefined;
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

/** Also resolves interrupted sends (commands/interrupted-sends.ts): their evidence is a receipt. */
export interface InboundPipeline extends InterruptedSendResolver {
  handleUpsert(accountId: string, upsert: MessagesUpsert, ctx: InboundContext): Promise<void>;
  /**
   * Messages of consecutive upserts of one account, in order: the same handling as one
   * `handleUpsert` each, with new messages that follow each other written together (their rows
   * in shared requests, one chat update per chat). Answers, per message, whether it was handled
   * (a failure is logged here; the caller releases that message for a replay).
   */
  handleMessages(accountId: string, messages: readonly UpsertedMessage[], ctx: InboundContext): Promise<boolean[]>;
  /**
   * Enqueues the events of the account's event-outbox items left behind (a process that died
   * between a row change and its enqueue, or a failed handling): at a login every item no
   * handling here waits for, otherwise only when this process left one (event-outbox.ts).
   */
  replayOutbox(accountId: string, options: { atLogin: boolean }): Promise<void>;
  /** The account's session in this process ended: what its event outbox keeps for reuse goes. */
  accountLeft(accountId: string): Promise<void>;
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

type WriteAhead = 'live' | 'replay';

const DEFAULT_MEDIA_TIMEOUT_MS = 5 * 60_000;

export function createInboundPipeline(deps: InboundPipelineDeps): InboundPipeline {
  const table = tableOf(deps.config, deps.clients);
  const mediaStore = mediaStoreOf(deps.config, deps.clients);
  const queues = deps.queues ?? createQueues(deps.config, deps.clients, deps.logger);
  const events = deps.events ?? queuedPublisher(queues);
  const chats = chatWriterOf(table);
  const deliverFromMe = deps.deliverFromMe ?? deps.config.WEBHOOK_INCLUDE_FROM_ME;
  const outbox = new EventOutbox(table, deps.logger);
  const sentStatus = sentStatusOf({ table, events, chats, outbox, logger: deps.logger });
  const newMessages = newMessagesOf({
    table,
    mediaStore,
    events,
    chats,
    sentStatus,
    deliverFromMe,
    mediaTimeoutMs: deps.mediaTimeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS,
  });
  const updates = messageUpdatesOf({ table, events, outbox, deliverFromMe });
  let mapper: typeof import('./map-message.js') | undefined;

  /** What the message is; map-message loads Baileys, which an empty connector does not need, so it comes with the first message. */
  async function mapOne(msg: WAMessage, ctx: InboundContext): Promise<InboundAction> {
    // Before mapping: reactions, edits and revokes in a group are group traffic too. Skipped,
    // the message counts as handled, so its write-ahead record is deleted like a stored one's.
    // Not Baileys' `shouldIgnoreJid`: that nacks the stanza undecrypted, and the sender keys
    // group messages carry would be lost, so that the group could not be read once the
    // setting is turned off again.
    if (ctx.ignoreGroups?.() && msg.key.remoteJid && isGroupJid(msg.key.remoteJid)) return { kind: 'skip', reason: 'group (ignoreGroups)' };
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
      case 'message':
        await newMessages.storeNewMessage(accountId, msg, action.message, action.media, upsertType, ctx, log);
        if (action.pollSecret) await putPollSecret(table, accountId, action.message.messageId, action.pollSecret);
        return;
      case 'reaction':
      case 'revoke':
      case 'edit':
      case 'poll_vote':
        await updates.applyUpdate(accountId, msg.key.id ?? '', action, ctx, log);
        return;
    }
  }

  const handleInOrder = inOrderHandler({ logger: deps.logger, map: mapOne, storeNewRun: newMessages.storeNewRun, handleOne });

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
    async replayOutbox(accountId, { atLogin }) {
      const items = await outbox.stranded(accountId, atLogin);
      let replayed = 0;
      for (const item of items) {
        try {
          for (const receipt of item.receipts ?? []) await sentStatus.replayReceipt(accountId, receipt);
          for (const event of outboxEvents(item)) await events.publish(event);
          await outbox.remove(accountId, item.id);
          replayed += 1;
        } catch (error) {
          outbox.keep(accountId);
          deps.logger.error({ accountId, err: error }, 'event outbox replay failed: the item is kept for the next one');
        }
      }
      if (items.length > 0) deps.logger.info({ accountId, replayed, failed: items.length - replayed }, 'event outbox items replayed');
    },
    accountLeft: (accountId) => outbox.leave(accountId),
    handleStatus: sentStatus.handleStatus,
    handleGroupReceipts: sentStatus.handleGroupReceipts,
    resolveInterruptedSend: sentStatus.resolveInterruptedSend,
  };
}
